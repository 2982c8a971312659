import { Migration } from '@mikro-orm/migrations';

/**
 * One truth for which payout holds an entry: `payout_items`, one row per entry carried by a payout,
 * from the run that creates the payout until it is canceled or fails (the entries released: the
 * rows deleted), and for good once it is paid. Before, a pending payout's entries were rows of
 * payout_items and a paid one's entries recorded it themselves in `commissions.payout_id` (the row
 * moved from one to the other when the payout was paid), so two places answered the same question.
 *
 * payout_items is kept, not commissions.payout_id: a run gathers its entries by inserting narrow
 * rows (rewriting 158 000 entries instead cost 53 s on bench/ledger-seeded.ts's database), and its
 * primary key (organization_id, commission_id) is what the database enforces as "at most one payout
 * per entry". The API's `payout_id` of an entry is read from it (commissions.repository.ts).
 *
 * Moves every paid entry's payout into payout_items, then drops the column, its foreign key, its
 * check (`payout_id` only on paid entries) and its index; commissions_unpaid_idx no longer names it
 * (an entry pending or approved never had one).
 */
export class Migration20270117100000_one_payout_membership extends Migration {
  override async up(): Promise<void> {
    this.addSql(`insert into payout_items (organization_id, commission_id, payout_id)
  select organization_id, id, payout_id from commissions where payout_id is not null
  on conflict (organization_id, commission_id) do nothing;
create index if not exists commissions_unpaid_by_status_idx on commissions (organization_id, affiliate_id, program_id, currency) where status in ('pending', 'approved');
drop index if exists commissions_unpaid_idx;
alter index commissions_unpaid_by_status_idx rename to commissions_unpaid_idx;
alter table commissions drop constraint if exists commissions_payout_only_when_paid;
alter table commissions drop constraint if exists commissions_payout_id_fkey;
alter table commissions drop column payout_id;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table commissions add column payout_id uuid;
update commissions c set payout_id = i.payout_id from payout_items i
  where i.organization_id = c.organization_id and i.commission_id = c.id and c.status = 'paid';
delete from payout_items i using commissions c
  where c.organization_id = i.organization_id and c.id = i.commission_id and c.status = 'paid';
alter table commissions add constraint commissions_payout_only_when_paid check ((payout_id is null) or (status = 'paid')),
  add constraint commissions_payout_id_fkey foreign key (payout_id, organization_id) references payouts (id, organization_id);
create index if not exists commissions_payout_key_idx on commissions (payout_id, organization_id) where payout_id is not null;
drop index if exists commissions_unpaid_idx;
create index commissions_unpaid_idx on commissions (organization_id, affiliate_id, program_id, currency) where ((payout_id is null) and (status in ('pending', 'approved')));`);
  }
}
