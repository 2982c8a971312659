import { isUniqueViolation, type Db } from '../../db/sql.js';
import { sql } from 'kysely';

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
export async function holdToken(db: Db, owner: TokenOwner, token: string): Promise<void> {
  // One statement: the insert, else the holder as this statement's snapshot saw it. A holder that
  // committed concurrently (the insert waited for it, then did nothing) is not in that snapshot:
  // no row at all, which is just as much "taken".
  const row = await db.one(sql<{ affiliate_id: string }>`with held as (
       insert into affiliate_link_tokens (organization_id, token, affiliate_id, program_id) values (${owner.organizationId}, ${token}, ${owner.affiliateId}, ${owner.programId})
       on conflict do nothing returning affiliate_id)
     select affiliate_id from held
     union all
     select affiliate_id from affiliate_link_tokens where organization_id = ${owner.organizationId} and token = ${token}
     limit 1`);
  if (row?.affiliate_id !== owner.affiliateId) throw new TokenTakenError(token);
}

/** The affiliate holding `token` in the organization, if any. */
export async function tokenHolder(db: Db, organizationId: string, token: string): Promise<string | undefined> {
  const row = await db.one(
    sql<{
      affiliate_id: string;
    }>`select affiliate_id from affiliate_link_tokens where organization_id = ${organizationId} and token = ${token}`,
  );
  return row?.affiliate_id;
}

/**
 * Releases the tokens of these affiliates that are no longer their slug or one of their aliases
 * (after an erasure replaced the slug and deleted the aliases): free for anyone again.
 */
export async function releaseUnusedTokens(db: Db, organizationId: string, affiliateIds: string[]): Promise<void> {
  await db.rows(sql`delete from affiliate_link_tokens t where t.organization_id = ${organizationId} and t.affiliate_id = any (${affiliateIds}::uuid[])
       and not exists (select 1 from affiliates a where a.organization_id = t.organization_id and a.id = t.affiliate_id and a.slug = t.token)
       and not exists (select 1 from affiliate_link_aliases l where l.organization_id = t.organization_id and l.token = t.token)`);
}

/** An affiliate's aliases: its other link tokens, still attributing to it, in order. */
export async function aliasesOf(db: Db, organizationId: string, affiliateId: string): Promise<string[]> {
  const rows = await db.rows(
    sql<{
      token: string;
    }>`select token from affiliate_link_aliases where organization_id = ${organizationId} and affiliate_id = ${affiliateId} order by token`,
  );
  return rows.map((r) => r.token);
}

/**
 * Makes `slug` the affiliate's slug, keeping its current slug as an alias so that published links
 * keep paying. A slug that is one of its own aliases swaps with the current one; one another
 * affiliate holds is a TokenTakenError. The caller updates `affiliates.slug` in the same
 * transaction, after this.
 */
export async function moveSlug(db: Db, owner: TokenOwner, from: string, to: string): Promise<void> {
  if (from === to) return;
  await holdToken(db, owner, from);
  await holdToken(db, owner, to);
  await db.rows(
    sql`delete from affiliate_link_aliases where organization_id = ${owner.organizationId} and token = ${to} and affiliate_id = ${owner.affiliateId}`,
  );
  await db.rows(
    sql`insert into affiliate_link_aliases (organization_id, token, affiliate_id, program_id) values (${owner.organizationId}, ${from}, ${owner.affiliateId}, ${owner.programId}) on conflict do nothing`,
  );
}
