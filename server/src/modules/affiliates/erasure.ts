import type { MikroORM } from '@mikro-orm/postgresql';
import { sql as raw } from 'kysely';
import { notifyChange } from '../../db/change-notifications.js';
import { kyselyOf, type StoredRow } from '../../db/database.js';
import type { Db } from '../../db/sql.js';
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
export async function erasureScope(db: Db, organizationId: string): Promise<string[]> {
  const twins = await db.rows(
    raw<{ id: string }>`select id from organizations where live_organization_id = ${organizationId}`,
  );
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
  db: Db,
  orm: MikroORM,
  organizationId: string,
  email: string,
  at: Date,
): Promise<AffiliateRecord[]> {
  await lockPartnerForm(db, organizationId, email);
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
  const erased = (await db.rows({
    compile: () => withEvents(update, 'affiliate.updated', organizationId).compile(kyselyOf(orm)),
  })) as AffiliateRecord[];
  const ids = erased.map((row) => row.id);
  await db.rows(
    raw`delete from tax_forms where organization_id = ${organizationId} and affiliate_id = any (${ids}::uuid[])`,
  );
  await db.rows(
    raw`delete from affiliate_link_aliases where organization_id = ${organizationId} and affiliate_id = any (${ids}::uuid[])`,
  );
  // The link tokens (link-tokens.ts): the `erased-` slugs held, the old slugs and aliases free again.
  await db.rows(raw`insert into affiliate_link_tokens (organization_id, token, affiliate_id, program_id)
     select organization_id, slug, id, program_id from affiliates where organization_id = ${organizationId} and id = any (${ids}::uuid[]) on conflict do nothing`);
  await releaseUnusedTokens(db, organizationId, ids);
  await db.rows(
    raw`update coupons set code = ${raw.raw(ERASED_TOKEN)} where organization_id = ${organizationId} and affiliate_id = any (${ids}::uuid[])`,
  );
  await db.rows(raw`delete from partner_sessions where organization_id = ${organizationId} and email = ${email}`);
  await db.rows(raw`delete from partner_sign_in_links where organization_id = ${organizationId} and email = ${email}`);
  await db.rows(
    raw`delete from test_emails where organization_id = ${organizationId} and lower(recipient) = ${email.toLowerCase()}`,
  );
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
  await db.rows(raw`update outbound_events set resource = resource || (${JSON.stringify(patches)}::jsonb -> (resource ->> 'id'))
     where organization_id = ${organizationId} and type in ('affiliate.created', 'affiliate.updated') and resource ->> 'id' = any (${ids}::text[])`);
  for (const id of ids) await notifyChange(db, { kind: 'affiliate_links', id });
  return erased;
}
