import { Migration } from '@mikro-orm/migrations';

/**
 * A pending payout's entries as rows of their own (`payout_items`), instead of a `payout_id`
 * written into each entry when the payout is created. Creating the payouts of 158 000 approved
 * entries (bench/ledger-seeded.ts) rewrote 158 000 rows of a 2-million-row table, each a new row
 * version with an entry in each of its five indexes, after locking every one of them: 74 s, far
 * past the 5 s statement timeout. It now inserts 158 000 narrow rows into a table with two indexes.
 *
 * - "A commission is in at most one non-canceled payout": while its payout is pending, the entry
 *   is one row of payout_items, whose primary key is the entry; when the payout is paid, the
 *   entry's row is deleted and the entry itself records the payout (`commissions.payout_id`, one
 *   column, now set only on `paid` entries: the check below), in one transaction; a cancel deletes
 *   the rows. So the database holds an entry in one live payout at most, whatever the callers do.
 * - Two payout runs of one organization are serialized by an advisory lock (payouts.repository.ts),
 *   and the changes that must not race a run (a refund or a rejection of an entry it may take)
 *   hold the same lock shared: the run no longer locks each entry's row.
 * - One index, the primary key, filled in its order by a run (its rows sorted by entry): a second
 *   index by payout, filled in random order, and foreign keys cost more than the rest of the insert
 *   (EXPLAIN on that database: 1.7 s of index upkeep and 1.7 s of payout-key checks for 157 000
 *   rows). A payout's items are found from its affiliate's unpaid entries (commissions_unpaid_idx)
 *   and this key. No foreign key to commissions either: its check locks each referenced entry (FOR
 *   KEY SHARE), the per-entry write this table exists to avoid. Only the payout run writes items,
 *   from the entries and the payouts it has just read and written in the same statement; entries
 *   and payouts are never deleted.
 * - Entries in a pending payout today move to payout_items.
 */
export class Migration20261231200000_payout_items extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table payout_items (
  organization_id uuid not null,
  commission_id uuid not null,
  payout_id uuid not null,
  constraint payout_items_pkey primary key (organization_id, commission_id)
);

insert into payout_items (organization_id, commission_id, payout_id)
  select c.organization_id, c.id, c.payout_id
  from commissions c join payouts p on p.id = c.payout_id and p.organization_id = c.organization_id
  where p.status = 'pending';
update commissions c set payout_id = null
  from payouts p
  where p.id = c.payout_id and p.organization_id = c.organization_id and p.status = 'pending';

alter table commissions drop constraint commissions_payout_only_when_payable;
alter table commissions add constraint commissions_payout_only_when_paid check (payout_id is null or status = 'paid');`);
  }
}
