/**
 * The migrations of the development builds before the baseline (named
 * Migration20261122… to Migration20261231…). The project published no release with them; the baseline replaced all 30 with one
 * readable statement of the same schema, keys back and nothing created at run time. A database
 * that applied them holds their names in `mikro_orm_migrations`: the baseline would collide with
 * its tables, so it refuses that database before it changes anything, and says what to do.
 */
export const OLD_CHAIN_MIGRATIONS = [
  'Migration20261122000000_initial',
  'Migration20261201000000_webhooks',
  'Migration20261202000000_money_minor_units',
  'Migration20261210000000_rate_limits',
  'Migration20261224000000_refund_identity',
  'Migration20261225000000_ledger',
  'Migration20261226000000_ledger_sale_entries',
  'Migration20261226100000_distribution_keys',
  'Migration20261227000000_reports',
  'Migration20261228000000_people',
  'Migration20261229000000_outbound_events',
  'Migration20261229000100_encrypt_integration_secrets',
  'Migration20261230000000_program_rules',
  'Migration20261230050000_webhook_log',
  'Migration20261230100000_partner_portal',
  'Migration20261231000000_commissions_status_list',
  'Migration20261231000100_report_deferred_days',
  'Migration20261231000200_report_entry_periods',
  'Migration20261231000300_report_affiliate_days',
  'Migration20261231100000_delivery_upkeep',
  'Migration20261231200000_payout_items',
  'Migration20261231210000_outbox_batches',
  'Migration20261231300000_report_pending_folded',
  'Migration20261231300100_report_affiliate_days_by_affiliate',
  'Migration20261231300200_report_affiliate_revenue',
  'Migration20261231400000_membership_foreign_keys',
  'Migration20261231500000_merchant_id_keys',
  'Migration20261231600000_references_by_statement',
  'Migration20261231700000_reference_lookups_by_id',
  'Migration20261231800000_outbox_batch_rows',
] as const;

/** What the refusal says: the cause, and the way forward (docs/data-lifecycle.md, "Databases made before the baseline"). */
export const OLD_CHAIN_MESSAGE =
  'This database was made by the development migrations that preceded the baseline (mikro_orm_migrations lists ' +
  'Migration2026...); this release cannot upgrade it in place. Keep it, and move its data to a new database: ' +
  '(1) stop every instance, let none write; (2) create an empty database and start this release once on it ' +
  '(it applies the baseline), then stop it; (3) copy the data: pg_dump --data-only --disable-triggers ' +
  '--exclude-table=mikro_orm_migrations --exclude-table=outbound_event_batches OLD_DATABASE | psql NEW_DATABASE; ' +
  '(4) point DATABASE_URL at the new database. See docs/data-lifecycle.md, "Databases made before the baseline".';

/** The baseline's first statement: refuses (SQLSTATE 55000) a database made by the old chain, before anything is created. */
export function refuseOldChain(): string {
  const names = OLD_CHAIN_MIGRATIONS.map((n) => `'${n}'`).join(', ');
  return `do $refuse$ begin
  if exists (select 1 from mikro_orm_migrations where name in (${names})) then
    raise exception using errcode = '55000', message = '${OLD_CHAIN_MESSAGE.replace(/'/g, "''")}';
  end if;
end $refuse$;`;
}
