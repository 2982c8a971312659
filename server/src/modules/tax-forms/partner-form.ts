import type { Db } from '../../db/sql.js';
import { sql } from 'kysely';

/** The affiliates' tax_form_* columns as stored (Migration20270108000000_tax_forms). */
export interface PartnerForm {
  tax_form_status: 'submitted' | 'accepted' | 'rejected' | null;
  tax_form_kind: 'w9' | 'w8ben' | 'w8bene' | null;
  tax_form_submitted_at: Date | null;
  tax_form_decided_at: Date | null;
  tax_form_rejection_reason: string | null;
}

/**
 * A partner's tax form is one per e-mail within the organization: every membership of that e-mail
 * carries the same tax_form_* columns (tax-forms.repository.ts submit and decide change them all at
 * once). These keep a membership created later (joining another program, added by the merchant,
 * imported) in line with them.
 */

/**
 * The lock of one partner's form (organization and e-mail), transaction-scoped: a submission, a
 * decision, an erasure and a new membership of that e-mail take it, so that a new membership
 * takes the form either before or after a change, and the change then reaches it.
 */
export async function lockPartnerForm(db: Db, organizationId: string, email: string): Promise<void> {
  await db.rows(sql`select pg_advisory_xact_lock(hashtextextended(${`tax-form:${organizationId}:${email}`}, 0))`);
}

/** The form the partner has now (from their latest-submitted membership), or every column null (`missing`). Read under lockPartnerForm. */
export async function partnerFormOf(db: Db, organizationId: string, email: string): Promise<PartnerForm> {
  const row =
    await db.one(sql<PartnerForm>`select tax_form_status, tax_form_kind, tax_form_submitted_at, tax_form_decided_at, tax_form_rejection_reason
       from affiliates where organization_id = ${organizationId} and email = ${email} and tax_form_status is not null
      order by tax_form_submitted_at desc, tax_form_decided_at desc nulls last limit 1`);
  return (
    row ?? {
      tax_form_status: null,
      tax_form_kind: null,
      tax_form_submitted_at: null,
      tax_form_decided_at: null,
      tax_form_rejection_reason: null,
    }
  );
}
