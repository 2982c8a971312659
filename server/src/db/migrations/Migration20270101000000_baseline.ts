import { Migration } from '@mikro-orm/migrations';
import { ATTRIBUTION } from './baseline/attribution.js';
import { EVENTS } from './baseline/events.js';
import { LEDGER } from './baseline/ledger.js';
import { refuseOldChain } from './baseline/old-chain.js';
import { REPORT_FUNCTIONS } from './baseline/report-functions.js';
import { REPORT_TABLES } from './baseline/report-tables.js';
import { TENANCY } from './baseline/tenancy.js';

/**
 * The schema as one readable baseline (the project published no release before it): every table
 * with its keys. What it guarantees is stated in PostgreSQL's own terms (docs/architecture.md,
 * "Guarantees"):
 *
 * - Every reference is a foreign key, composite with `organization_id` (Citus co-location), in
 *   pg_constraint, enforced on INSERT and UPDATE: a conversion's click and membership, an entry's
 *   conversion and membership, a payout item's entry and payout, the read model's memberships. No
 *   trigger stands in for one, and none refuses a DELETE: the keys keep what the ledger refers to,
 *   and what nothing refers to can be deleted (docs/data-lifecycle.md).
 * - The only functions are the ones below (the approval-by-time rule, the report read model),
 *   created here; the service creates none at run time and needs no CREATE privilege.
 * - No column has another table's row type (the outbox batches hold JSON), so an ordinary later
 *   migration (a column added with a default, a type changed) is never refused.
 * - No planner setting inside a function.
 *
 * The order of the parts is the order of the references: a table after those it refers to.
 */
export class Migration20270101000000_baseline extends Migration {
  override async up(): Promise<void> {
    for (const part of [refuseOldChain(), TENANCY, ATTRIBUTION, LEDGER, EVENTS, REPORT_TABLES, REPORT_FUNCTIONS])
      this.addSql(part);
  }
}
