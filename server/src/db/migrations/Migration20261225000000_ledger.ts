import { Migration } from '@mikro-orm/migrations';

/**
 * The commission ledger (shared/spec/ledger.md): programs gain their hold, approval and payout
 * minimum, affiliates their status and payout e-mail; commissions and payouts become tables.
 *
 * - One `sale` entry per conversion at most: a partial unique index.
 * - A commission is in at most one live payout by construction: `payout_id` is a single column,
 *   set when a payout takes the entry and cleared when that payout is canceled; only an approved
 *   or paid entry may carry one (check).
 * - "Approved by itself" is not a stored transition: a `pending` entry whose `approves_at` has
 *   passed is approved in every query (commission-lifecycle.ts effectiveStatus), so nothing has to
 *   run at that moment, on any instance. `approved_at` records an approval that was an act (the
 *   merchant's, or an adjustment's creation); an entry was approved at coalesce(approved_at, approves_at).
 * - Sale entries are not written here: they come with the conversions' write path, whose
 *   migration gives every conversion that earned a commission and has no entry its own.
 */
export class Migration20261225000000_ledger extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
alter table programs
  add column hold_days integer not null default 30 check (hold_days between 0 and 365),
  add column auto_approve boolean not null default true,
  add column minimum_payout numeric(20, 2) not null default 0 check (minimum_payout >= 0);

alter table affiliates
  add column status text not null default 'active' check (status in ('active', 'pending', 'disabled')),
  add column payout_email text null;

create table payouts (
  id uuid primary key,
  organization_id uuid not null references organizations (id),
  affiliate_id uuid not null references affiliates (id),
  program_id uuid not null references programs (id),
  currency char(3) not null,
  amount numeric(20, 2) not null check (amount > 0),
  status text not null check (status in ('pending', 'paid', 'canceled')),
  commission_count integer not null check (commission_count > 0),
  reference text null,
  created_at timestamptz not null default now(),
  paid_at timestamptz null,
  canceled_at timestamptz null
);
create index payouts_list_idx on payouts (organization_id, created_at desc, id desc);

create table commissions (
  id uuid primary key,
  organization_id uuid not null references organizations (id),
  type text not null check (type in ('sale', 'clawback', 'adjustment')),
  status text not null check (status in ('pending', 'approved', 'paid', 'reversed', 'rejected', 'on_hold')),
  amount numeric(20, 2) not null,
  currency char(3) not null,
  affiliate_id uuid not null references affiliates (id),
  program_id uuid not null references programs (id),
  conversion_id uuid null references conversions (id),
  customer_id text null,
  description text null,
  rejection_reason text null,
  approves_at timestamptz null,
  approved_at timestamptz null,
  payout_id uuid null references payouts (id),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint commissions_amount_sign check (
    (type = 'sale' and amount > 0) or (type = 'clawback' and amount < 0) or (type = 'adjustment' and amount <> 0)
  ),
  constraint commissions_conversion_link check ((type = 'adjustment') = (conversion_id is null)),
  constraint commissions_adjustment_described check (type <> 'adjustment' or description is not null),
  constraint commissions_payout_only_when_payable check (payout_id is null or status in ('approved', 'paid'))
);
create unique index commissions_one_sale_per_conversion on commissions (conversion_id) where type = 'sale';
create index commissions_list_idx on commissions (organization_id, created_at desc, id desc);
create index commissions_conversion_idx on commissions (conversion_id) where conversion_id is not null;
create index commissions_payout_idx on commissions (payout_id) where payout_id is not null;
create index commissions_unpaid_idx on commissions (organization_id, affiliate_id, program_id, currency)
  where payout_id is null and status in ('pending', 'approved');

`);
  }
}
