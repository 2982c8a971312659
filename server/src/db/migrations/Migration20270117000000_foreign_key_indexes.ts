import { Migration } from '@mikro-orm/migrations';

/**
 * An index on the referencing side of every foreign key (test/reliability/foreign-key-indexes.test.ts
 * reads the catalog for any left without). Deleting or re-keying a referenced row (an affiliate, a
 * payout, an event) makes PostgreSQL look for the rows pointing at it; without an index whose
 * leading columns are the key's columns that check read every row of the organization in the
 * referencing table (every click of an organization to delete one of its affiliates). The
 * membership keys (affiliate_id, program_id, organization_id) are indexed with the organization
 * first, as every tenant index here; the order of columns compared by equality does not matter to
 * PostgreSQL. Where an index already led with one of the key's columns it is extended in place of a
 * second one (commissions_payout_idx, webhook_deliveries_event_idx): the new one is created under a
 * new name, then the old one dropped; webhook_deliveries_organization_idx (organization_id,
 * endpoint_id) covers both keys of a delivery to its organization and to its endpoint (the
 * endpoint's list keeps webhook_deliveries_list_idx, which its query, by endpoint alone, uses).
 *
 * `if not exists`: on a large table, an operator creates them beforehand with CREATE INDEX
 * CONCURRENTLY (same names and definitions), which does not block writes; this migration, run in a
 * transaction, would hold the table's writes while it builds them (as
 * Migration20270113000000_retention_at_scale). The reports' tables may have been replaced by the
 * time this runs: their indexes are made only where the table is there.
 */
const INDEXES = `create index if not exists affiliate_link_aliases_membership_idx on affiliate_link_aliases (organization_id, affiliate_id, program_id);
create index if not exists affiliate_link_aliases_import_idx on affiliate_link_aliases (organization_id, import_id) where import_id is not null;
create index if not exists clicks_membership_idx on clicks (organization_id, affiliate_id, program_id);
create index if not exists suppressed_clicks_membership_idx on suppressed_clicks (organization_id, affiliate_id, program_id);
create index if not exists customers_membership_idx on customers (organization_id, affiliate_id, program_id);
create index if not exists conversions_membership_idx on conversions (organization_id, affiliate_id, program_id);
create index if not exists commissions_membership_idx on commissions (organization_id, affiliate_id, program_id);
create index if not exists commissions_payout_key_idx on commissions (payout_id, organization_id) where payout_id is not null;
drop index if exists commissions_payout_idx;
create index if not exists coupons_membership_idx on coupons (organization_id, affiliate_id, program_id);
create index if not exists payouts_membership_idx on payouts (organization_id, affiliate_id, program_id);
create index if not exists payouts_retried_by_idx on payouts (organization_id, retried_by_payout_id) where retried_by_payout_id is not null;
create index if not exists imports_program_idx on imports (organization_id, program_id);
create index if not exists invitations_invited_by_idx on invitations (invited_by) where invited_by is not null;
create index if not exists organizations_live_organization_idx on organizations (live_organization_id, live_organization_livemode) where live_organization_id is not null;
create index if not exists outbound_events_organization_idx on outbound_events (organization_id);
create index if not exists outbound_event_batches_organization_idx on outbound_event_batches (organization_id);
create index if not exists webhook_deliveries_organization_idx on webhook_deliveries (organization_id, endpoint_id);
create index if not exists webhook_deliveries_event_key_idx on webhook_deliveries (event_id, organization_id);
drop index if exists webhook_deliveries_event_idx;`;

/** The reports' tables (the read model's; made where the table exists). */
const REPORT_INDEXES: [table: string, statement: string][] = [
  [
    'report_affiliate_days',
    'create index if not exists report_affiliate_days_membership_idx on report_affiliate_days (organization_id, affiliate_id, program_id)',
  ],
  [
    'report_affiliate_revenue',
    'create index if not exists report_affiliate_revenue_membership_idx on report_affiliate_revenue (organization_id, affiliate_id, program_id)',
  ],
  [
    'report_affiliate_totals',
    'create index if not exists report_affiliate_totals_membership_idx on report_affiliate_totals (organization_id, affiliate_id, program_id)',
  ],
  [
    'report_program_days',
    'create index if not exists report_program_days_program_idx on report_program_days (organization_id, program_id)',
  ],
];

export class Migration20270117000000_foreign_key_indexes extends Migration {
  override async up(): Promise<void> {
    this.addSql(INDEXES);
    for (const [table, statement] of REPORT_INDEXES)
      this.addSql(`do $$ begin if to_regclass('${table}') is not null then ${statement}; end if; end $$;`);
  }

  override async down(): Promise<void> {
    this
      .addSql(`create index if not exists commissions_payout_idx on commissions (payout_id) where payout_id is not null;
create index if not exists webhook_deliveries_event_idx on webhook_deliveries (event_id);
drop index if exists affiliate_link_aliases_membership_idx, affiliate_link_aliases_import_idx, clicks_membership_idx,
  suppressed_clicks_membership_idx, customers_membership_idx, conversions_membership_idx, commissions_membership_idx,
  commissions_payout_key_idx, coupons_membership_idx, payouts_membership_idx, payouts_retried_by_idx, imports_program_idx,
  invitations_invited_by_idx, organizations_live_organization_idx, outbound_events_organization_idx,
  outbound_event_batches_organization_idx, webhook_deliveries_organization_idx, webhook_deliveries_event_key_idx,
  report_affiliate_days_membership_idx, report_affiliate_revenue_membership_idx,
  report_affiliate_totals_membership_idx, report_program_days_program_idx;`);
  }
}
