import { Migration } from '@mikro-orm/migrations';

/**
 * The commissions list filtered by status (GET /api/commissions?status=…), newest first, as a walk
 * of one index: the entries of that stored status in list order, and `approves_at` in the key so
 * that the pending entries past it (approved by time: commission-lifecycle.ts effectiveStatus) are
 * told from those still in their hold inside the index, without reading their rows. Without it the
 * list walked every entry newest first and read past all those of other statuses (540 ms for the
 * approved ones on the seeded database of bench/ledger-seeded.ts). Keyed by organization first, as
 * every index of a tenant table.
 */
export class Migration20261231000000_commissions_status_list extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create index commissions_status_list_idx on commissions (organization_id, status, created_at desc, id desc, approves_at);`);
  }
}
