import type { MikroORM } from '@mikro-orm/postgresql';
import { sql as raw } from 'kysely';
import { notifyChange } from '../../db/change-notifications.js';
import { kyselyOf, type StoredRow } from '../../db/database.js';
import type { Sql } from '../../db/sql.js';
import { releaseUnusedTokens } from './link-tokens.js';
import { withEvents } from '../events/outbox.js';
import { lockPartnerForm } from '../tax-forms/partner-form.js';

type AffiliateRecord = StoredRow<'affiliates'>;

/**
 * What replaces an erased partner's slug and coupon codes: `erased-` and the row's own id without
 * its dashes. Unique (ids are), in the slug's alphabet, and it says nothing of the person.
 */
const ERASED_TOKEN = `'erased-' || replace(id::text, '-', '')`;

/**
 * The organizations a person's details are erased in: the organization asked, and, when it is a
 * live one, its test twin (organizations.live_organization_id, spec/test-mode.md), where the
 * merchant may have tried the partner's side with the same e-mail.
 */
export async function erasureScope(sql: Sql, organizationId: string): Promise<string[]> {
  const twins = await sql.rows<{ id: string }>('select id from organizations where live_organization_id = ?', [
    organizationId,
  ]);
  return [organizationId, ...twins.map((t) => t.id)];
}

/**
 * Erases, in the caller's transaction, every detail of the person with `email` in one organization
 * (docs/data-lifecycle.md, "Erasing a partner on request"):
 *
 * - each membership: e-mail replaced by `erased-<id>@erased.invalid`, name, payout e-mail, Stripe
 *   account, portal sign-in IP and user agent and tax form state removed, the slug replaced by
 *   `erased-<id>` (the old one attributes nothing any more, and is free again), disabled;
 * - their link aliases (imported links) deleted, their coupon codes replaced by `erased-<coupon id>`
 *   (the coupons stay, with their references);
 * - their tax form documents, portal sessions and sign-in links deleted;
 * - the outbox's copies of the memberships (affiliate.* events) erased the same way, and the test
 *   e-mails kept for them (a test organization's) deleted.
 *
 * The ledger (conversions, commissions, payouts) refers to the memberships by id and is not
 * touched. Every instance drops the memberships' cached status and slugs when the transaction
 * commits. Answers the erased memberships.
 */
export async function erasePerson(
  sql: Sql,
  orm: MikroORM,
  organizationId: string,
  email: string,
  at: Date,
): Promise<AffiliateRecord[]> {
  await lockPartnerForm(sql, organizationId, email);
  const update = kyselyOf(orm)
    .updateTable('affiliates')
    .set({
      email: raw<string>`'erased-' || id || '@erased.invalid'`,
      slug: raw<string>`'erased-' || replace(id::text, '-', '')`,
      name: null,
      payout_email: null,
      stripe_account_id: null,
      portal_sign_in_ip: null,
      portal_sign_in_user_agent: null,
      status: 'disabled',
      erased_at: at,
      // The tax form is personal data: its document deleted below, its state back to `missing`.
      tax_form_status: null,
      tax_form_kind: null,
      tax_form_submitted_at: null,
      tax_form_decided_at: null,
      tax_form_rejection_reason: null,
    })
    .where('organization_id', '=', organizationId)
    .where('email', '=', email)
    .returningAll();
  const erased = (await sql.execute({
    compile: () => withEvents(update, 'affiliate.updated', organizationId).compile(kyselyOf(orm)),
  })) as AffiliateRecord[];
  const ids = erased.map((row) => row.id);
  await sql.rows('delete from tax_forms where organization_id = ? and affiliate_id = any (?::uuid[])', [
    organizationId,
    ids,
  ]);
  await sql.rows('delete from affiliate_link_aliases where organization_id = ? and affiliate_id = any (?::uuid[])', [
    organizationId,
    ids,
  ]);
  // The link tokens (link-tokens.ts): the `erased-` slugs held, the old slugs and aliases free again.
  await sql.rows(
    `insert into affiliate_link_tokens (organization_id, token, affiliate_id, program_id)
     select organization_id, slug, id, program_id from affiliates where organization_id = ? and id = any (?::uuid[]) on conflict do nothing`,
    [organizationId, ids],
  );
  await releaseUnusedTokens(sql, organizationId, ids);
  await sql.rows(
    `update coupons set code = ${ERASED_TOKEN} where organization_id = ? and affiliate_id = any (?::uuid[])`,
    [organizationId, ids],
  );
  await sql.rows('delete from partner_sessions where organization_id = ? and email = ?', [organizationId, email]);
  await sql.rows('delete from partner_sign_in_links where organization_id = ? and email = ?', [organizationId, email]);
  await sql.rows('delete from test_emails where organization_id = ? and lower(recipient) = ?', [
    organizationId,
    email.toLowerCase(),
  ]);
  // What each erased affiliate's past events become, made here per id: Citus cannot run a STABLE
  // function (jsonb_build_object) over a column in an UPDATE, and `->` and `||` are immutable.
  const patches = Object.fromEntries(
    ids.map((id) => [
      id,
      {
        email: `erased-${id}@erased.invalid`,
        slug: `erased-${id.replaceAll('-', '')}`,
        name: null,
        payout_email: null,
        stripe_account_id: null,
        portal_sign_in_ip: null,
        portal_sign_in_user_agent: null,
        tax_form_status: null,
        tax_form_kind: null,
        tax_form_submitted_at: null,
        tax_form_decided_at: null,
        tax_form_rejection_reason: null,
      },
    ]),
  );
  await sql.rows(
    `update outbound_events set resource = resource || (?::jsonb -> (resource ->> 'id'))
     where organization_id = ? and type in ('affiliate.created', 'affiliate.updated') and resource ->> 'id' = any (?::text[])`,
    [JSON.stringify(patches), organizationId, ids],
  );
  for (const id of ids) await notifyChange((query, params) => sql.rows(query, params), { kind: 'affiliate_links', id });
  return erased;
}
