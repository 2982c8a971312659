import type { MigrationObject } from '@mikro-orm/core';
import { Migration20270101000000_baseline } from './Migration20270101000000_baseline.js';
import { Migration20270102000000_data_lifecycle } from './Migration20270102000000_data_lifecycle.js';
import { Migration20270103000000_imports } from './Migration20270103000000_imports.js';
import { Migration20270104000000_report_forget } from './Migration20270104000000_report_forget.js';
import { Migration20270105000000_test_mode } from './Migration20270105000000_test_mode.js';
import { Migration20270106000000_test_emails } from './Migration20270106000000_test_emails.js';
import { Migration20270107000000_payout_rails } from './Migration20270107000000_payout_rails.js';
import { Migration20270108000000_tax_forms } from './Migration20270108000000_tax_forms.js';
import { Migration20270109000000_payout_retries } from './Migration20270109000000_payout_retries.js';
import { Migration20270112000000_data_deletions } from './Migration20270112000000_data_deletions.js';
import { Migration20270113000000_retention_at_scale } from './Migration20270113000000_retention_at_scale.js';
import { Migration20270114000000_import_cancel } from './Migration20270114000000_import_cancel.js';
import { Migration20270115000000_hashed_verifications } from './Migration20270115000000_hashed_verifications.js';
import { Migration20270117000000_foreign_key_indexes } from './Migration20270117000000_foreign_key_indexes.js';
import { Migration20270117100000_one_payout_membership } from './Migration20270117100000_one_payout_membership.js';
import { Migration20270121000000_link_tokens } from './Migration20270121000000_link_tokens.js';
import { Migration20270122000000_report_add_rows } from './Migration20270122000000_report_add_rows.js';
import { Migration20270122000001_import_undone } from './Migration20270122000001_import_undone.js';
import { Migration20270122000002_import_terms } from './Migration20270122000002_import_terms.js';
import { Migration20270123000000_link_params } from './Migration20270123000000_link_params.js';
import { Migration20270124000000_partner_notices } from './Migration20270124000000_partner_notices.js';
import { Migration20270124000001_commissions_recent_brin } from './Migration20270124000001_commissions_recent_brin.js';
import { Migration20270126000000_branding } from './Migration20270126000000_branding.js';
import { Migration20270201000000_report_deltas } from './Migration20270201000000_report_deltas.js';
import { Migration20270202000000_citus_distribution } from './Migration20270202000000_citus_distribution.js';

/** Every committed migration, in order. A new migration is appended here. */
export const migrationsList: MigrationObject[] = [
  { name: 'Migration20270101000000_baseline', class: Migration20270101000000_baseline },
  { name: 'Migration20270102000000_data_lifecycle', class: Migration20270102000000_data_lifecycle },
  { name: 'Migration20270103000000_imports', class: Migration20270103000000_imports },
  { name: 'Migration20270104000000_report_forget', class: Migration20270104000000_report_forget },
  { name: 'Migration20270105000000_test_mode', class: Migration20270105000000_test_mode },
  { name: 'Migration20270106000000_test_emails', class: Migration20270106000000_test_emails },
  { name: 'Migration20270107000000_payout_rails', class: Migration20270107000000_payout_rails },
  { name: 'Migration20270108000000_tax_forms', class: Migration20270108000000_tax_forms },
  { name: 'Migration20270109000000_payout_retries', class: Migration20270109000000_payout_retries },
  { name: 'Migration20270112000000_data_deletions', class: Migration20270112000000_data_deletions },
  { name: 'Migration20270113000000_retention_at_scale', class: Migration20270113000000_retention_at_scale },
  { name: 'Migration20270114000000_import_cancel', class: Migration20270114000000_import_cancel },
  { name: 'Migration20270115000000_hashed_verifications', class: Migration20270115000000_hashed_verifications },
  { name: 'Migration20270117000000_foreign_key_indexes', class: Migration20270117000000_foreign_key_indexes },
  { name: 'Migration20270117100000_one_payout_membership', class: Migration20270117100000_one_payout_membership },
  { name: 'Migration20270121000000_link_tokens', class: Migration20270121000000_link_tokens },
  { name: 'Migration20270122000000_report_add_rows', class: Migration20270122000000_report_add_rows },
  { name: 'Migration20270122000001_import_undone', class: Migration20270122000001_import_undone },
  { name: 'Migration20270122000002_import_terms', class: Migration20270122000002_import_terms },
  { name: 'Migration20270123000000_link_params', class: Migration20270123000000_link_params },
  { name: 'Migration20270124000000_partner_notices', class: Migration20270124000000_partner_notices },
  {
    name: 'Migration20270124000001_commissions_recent_brin',
    class: Migration20270124000001_commissions_recent_brin,
  },
  { name: 'Migration20270126000000_branding', class: Migration20270126000000_branding },
  { name: 'Migration20270201000000_report_deltas', class: Migration20270201000000_report_deltas },
  { name: 'Migration20270202000000_citus_distribution', class: Migration20270202000000_citus_distribution },
];
