import { Migration } from '@mikro-orm/migrations';

/**
 * Tax forms (shared/spec/payout-rails.md, "Partners"; modules/tax-forms):
 *
 * - `affiliates.tax_form_*`: the state of the partner's form as the merchant and the payout run
 *   read it (no row in `tax_forms` and every column null: `missing`). The check keeps the columns
 *   coherent: a form on file has a kind and a submission time, and only a rejected one a reason.
 * - `tax_forms`: the document itself, AES-256-GCM ciphertext under ENCRYPTION_KEY
 *   (security/secret-box.ts sealBytes, authenticated with the membership's ids), one row per
 *   membership, replaced by a resubmission and deleted by the erasure of the partner's details.
 * - `programs.require_tax_form`: a program that pays no one whose form is not accepted
 *   (modules/tax-forms/payout-hold.ts). A constant default: no table rewrite.
 */
export class Migration20270108000000_tax_forms extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table affiliates
  add column tax_form_status text,
  add column tax_form_kind text,
  add column tax_form_submitted_at timestamptz,
  add column tax_form_decided_at timestamptz,
  add column tax_form_rejection_reason text,
  add constraint affiliates_tax_form_check check (
    (tax_form_status is null and tax_form_kind is null and tax_form_submitted_at is null and tax_form_decided_at is null and tax_form_rejection_reason is null)
    or (tax_form_status in ('submitted', 'accepted', 'rejected') and tax_form_kind in ('w9', 'w8ben', 'w8bene') and tax_form_submitted_at is not null
        and (tax_form_status = 'submitted') = (tax_form_decided_at is null)
        and (tax_form_status = 'rejected') = (tax_form_rejection_reason is not null)))`);
    this.addSql(`alter table programs add column require_tax_form boolean not null default false`);
    this.addSql(`create table tax_forms (
  organization_id uuid not null,
  affiliate_id uuid not null,
  kind text not null check (kind in ('w9', 'w8ben', 'w8bene')),
  content_type text not null check (content_type in ('application/pdf', 'image/png', 'image/jpeg')),
  file_name text not null,
  size_bytes integer not null check (size_bytes > 0),
  document bytea not null,
  submitted_at timestamptz not null,
  primary key (organization_id, affiliate_id),
  foreign key (affiliate_id, organization_id) references affiliates (id, organization_id)
)`);
  }
}
