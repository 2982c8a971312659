import type { MigrationObject } from '@mikro-orm/core';
import { Migration20261122000000_initial } from './Migration20261122000000_initial.js';
import { Migration20261201000000_webhooks } from './Migration20261201000000_webhooks.js';
import { Migration20261202000000_money_minor_units } from './Migration20261202000000_money_minor_units.js';
import { Migration20261210000000_rate_limits } from './Migration20261210000000_rate_limits.js';
import { Migration20261224000000_refund_identity } from './Migration20261224000000_refund_identity.js';
import { Migration20261225000000_ledger } from './Migration20261225000000_ledger.js';
import { Migration20261226000000_ledger_sale_entries } from './Migration20261226000000_ledger_sale_entries.js';
import { Migration20261226100000_distribution_keys } from './Migration20261226100000_distribution_keys.js';
import { Migration20261227000000_reports } from './Migration20261227000000_reports.js';
import { Migration20261228000000_people } from './Migration20261228000000_people.js';
import { Migration20261229000000_outbound_events } from './Migration20261229000000_outbound_events.js';
import { Migration20261229000100_encrypt_integration_secrets } from './Migration20261229000100_encrypt_integration_secrets.js';
import { Migration20261231000000_commissions_status_list } from './Migration20261231000000_commissions_status_list.js';
import { Migration20261231000100_report_deferred_days } from './Migration20261231000100_report_deferred_days.js';
import { Migration20261231000200_report_entry_periods } from './Migration20261231000200_report_entry_periods.js';
import { Migration20261231000300_report_affiliate_days } from './Migration20261231000300_report_affiliate_days.js';
import { Migration20261230000000_program_rules } from './Migration20261230000000_program_rules.js';
import { Migration20261230050000_webhook_log } from './Migration20261230050000_webhook_log.js';
import { Migration20261231100000_delivery_upkeep } from './Migration20261231100000_delivery_upkeep.js';
import { Migration20261231200000_payout_items } from './Migration20261231200000_payout_items.js';
import { Migration20261230100000_partner_portal } from './Migration20261230100000_partner_portal.js';

/** Every committed migration, in order. A new migration is appended here. */
export const migrationsList: MigrationObject[] = [
  { name: 'Migration20261122000000_initial', class: Migration20261122000000_initial },
  { name: 'Migration20261201000000_webhooks', class: Migration20261201000000_webhooks },
  { name: 'Migration20261202000000_money_minor_units', class: Migration20261202000000_money_minor_units },
  { name: 'Migration20261210000000_rate_limits', class: Migration20261210000000_rate_limits },
  { name: 'Migration20261224000000_refund_identity', class: Migration20261224000000_refund_identity },
  { name: 'Migration20261225000000_ledger', class: Migration20261225000000_ledger },
  { name: 'Migration20261226000000_ledger_sale_entries', class: Migration20261226000000_ledger_sale_entries },
  { name: 'Migration20261226100000_distribution_keys', class: Migration20261226100000_distribution_keys },
  { name: 'Migration20261227000000_reports', class: Migration20261227000000_reports },
  { name: 'Migration20261228000000_people', class: Migration20261228000000_people },
  { name: 'Migration20261229000000_outbound_events', class: Migration20261229000000_outbound_events },
  { name: 'Migration20261229000100_encrypt_integration_secrets', class: Migration20261229000100_encrypt_integration_secrets },
  { name: 'Migration20261230000000_program_rules', class: Migration20261230000000_program_rules },
  { name: 'Migration20261230050000_webhook_log', class: Migration20261230050000_webhook_log },
  { name: 'Migration20261230100000_partner_portal', class: Migration20261230100000_partner_portal },
  { name: 'Migration20261231000000_commissions_status_list', class: Migration20261231000000_commissions_status_list },
  { name: 'Migration20261231000100_report_deferred_days', class: Migration20261231000100_report_deferred_days },
  { name: 'Migration20261231000200_report_entry_periods', class: Migration20261231000200_report_entry_periods },
  { name: 'Migration20261231000300_report_affiliate_days', class: Migration20261231000300_report_affiliate_days },
  { name: 'Migration20261231100000_delivery_upkeep', class: Migration20261231100000_delivery_upkeep },
  { name: 'Migration20261231200000_payout_items', class: Migration20261231200000_payout_items },
];
