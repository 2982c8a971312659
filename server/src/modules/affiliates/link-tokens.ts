import { isUniqueViolation, type Sql } from '../../db/sql.js';

/**
 * An organization's link tokens (Migration20270121000000_link_tokens): every partner's slug and
 * aliases, one namespace, each token held by one affiliate. The primary key decides between
 * concurrent requests; every path that sets a slug or adds an alias registers its token here in
 * the same transaction, and every path that drops one releases it.
 */

/** Another affiliate holds the token (as its slug or one of its aliases). */
export class TokenTakenError extends Error {
  constructor(readonly token: string) {
    super(`"${token}" is already taken`);
  }
}

/** Whether `err` is a token already held: the registry's key, or (for slugs) the affiliates' own. */
export const isTokenTaken = (err: unknown): boolean =>
  isUniqueViolation(err, 'affiliate_link_tokens_pkey') || isUniqueViolation(err, 'affiliates_slug_unique');

export interface TokenOwner {
  organizationId: string;
  affiliateId: string;
  programId: string;
}

/**
 * Registers `token` for the affiliate. A token the affiliate already holds is left as it is; one
 * another affiliate holds is a TokenTakenError (after waiting for a concurrent holder to commit or
 * roll back, as the key does).
 */
export async function holdToken(sql: Sql, owner: TokenOwner, token: string): Promise<void> {
  // One statement: the insert, else the holder as this statement's snapshot saw it. A holder that
  // committed concurrently (the insert waited for it, then did nothing) is not in that snapshot:
  // no row at all, which is just as much "taken".
  const row = await sql.one<{ affiliate_id: string }>(
    `with held as (
       insert into affiliate_link_tokens (organization_id, token, affiliate_id, program_id) values ($1, $2, $3, $4)
       on conflict do nothing returning affiliate_id)
     select affiliate_id from held
     union all
     select affiliate_id from affiliate_link_tokens where organization_id = $1 and token = $2
     limit 1`,
    [owner.organizationId, token, owner.affiliateId, owner.programId],
  );
  if (row?.affiliate_id !== owner.affiliateId) throw new TokenTakenError(token);
}

/** The affiliate holding `token` in the organization, if any. */
export async function tokenHolder(sql: Sql, organizationId: string, token: string): Promise<string | undefined> {
  const row = await sql.one<{ affiliate_id: string }>(
    `select affiliate_id from affiliate_link_tokens where organization_id = $1 and token = $2`,
    [organizationId, token],
  );
  return row?.affiliate_id;
}

/**
 * Releases the tokens of these affiliates that are no longer their slug or one of their aliases
 * (after an erasure replaced the slug and deleted the aliases): free for anyone again.
 */
export async function releaseUnusedTokens(sql: Sql, organizationId: string, affiliateIds: string[]): Promise<void> {
  await sql.rows(
    `delete from affiliate_link_tokens t where t.organization_id = $1 and t.affiliate_id = any ($2::uuid[])
       and not exists (select 1 from affiliates a where a.organization_id = t.organization_id and a.id = t.affiliate_id and a.slug = t.token)
       and not exists (select 1 from affiliate_link_aliases l where l.organization_id = t.organization_id and l.token = t.token)`,
    [organizationId, affiliateIds],
  );
}

/** An affiliate's aliases: its other link tokens, still attributing to it, in order. */
export async function aliasesOf(sql: Sql, organizationId: string, affiliateId: string): Promise<string[]> {
  const rows = await sql.rows<{ token: string }>(
    `select token from affiliate_link_aliases where organization_id = $1 and affiliate_id = $2 order by token`,
    [organizationId, affiliateId],
  );
  return rows.map((r) => r.token);
}

/**
 * Makes `slug` the affiliate's slug, keeping its current slug as an alias so that published links
 * keep paying. A slug that is one of its own aliases swaps with the current one; one another
 * affiliate holds is a TokenTakenError. The caller updates `affiliates.slug` in the same
 * transaction, after this.
 */
export async function moveSlug(sql: Sql, owner: TokenOwner, from: string, to: string): Promise<void> {
  if (from === to) return;
  await holdToken(sql, owner, from);
  await holdToken(sql, owner, to);
  await sql.rows(`delete from affiliate_link_aliases where organization_id = $1 and token = $2 and affiliate_id = $3`, [
    owner.organizationId,
    to,
    owner.affiliateId,
  ]);
  await sql.rows(
    `insert into affiliate_link_aliases (organization_id, token, affiliate_id, program_id) values ($1, $2, $3, $4) on conflict do nothing`,
    [owner.organizationId, from, owner.affiliateId, owner.programId],
  );
}
