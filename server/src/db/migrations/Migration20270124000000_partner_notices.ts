import { Migration } from '@mikro-orm/migrations';

/**
 * E-mails to partners when they earn a commission and when a payout is sent (issue 47, item 10).
 *
 * - `affiliates.email_commissions`, `affiliates.email_payouts`: the partner's choice, on by default
 *   (a column with a constant default: no table rewrite). A partner (one e-mail with one merchant)
 *   sets them from the portal for all of their memberships at once, as their payout e-mail.
 * - `partner_notices`: one row per commission or payout a partner was told of (or chose not to
 *   be), written in the transaction that queues its e-mail (modules/partners/partner-notices.ts):
 *   its primary key is what makes each e-mail go once, whichever instance finds the row first.
 *   `subject_id` names a commission or a payout by `kind`, so it is no foreign key: a notice
 *   outlives nothing it could block (a test-data reset or an undone import deletes commissions),
 *   and it holds no personal data.
 */
export class Migration20270124000000_partner_notices extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table affiliates
  add column email_commissions boolean not null default true,
  add column email_payouts boolean not null default true`);
    this.addSql(`create table partner_notices (
  organization_id uuid not null references organizations (id),
  kind text not null check (kind in ('commission_earned', 'payout_sent')),
  subject_id uuid not null,
  sent boolean not null,
  created_at timestamptz not null default now(),
  primary key (organization_id, kind, subject_id)
)`);
  }
}
