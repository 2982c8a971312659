/** The baseline's ledger: payouts, commission entries and the entries of a pending payout. */
export const LEDGER = `
-- THE approval-by-time rule, its one SQL definition, used by every statement that reads an
-- entry's status (lists, payouts, the partner portal, reports; in TypeScript:
-- commission-lifecycle.ts effectiveStatus): a pending entry whose approves_at has passed at "at"
-- is due, and counts as approved. A pending entry without approves_at (its program does not
-- approve automatically) waits for the merchant: pending, never due (false, never null, so that
-- "not commission_due(...)" keeps it). Plain SQL functions: the planner inlines them into each
-- statement, so "commission_due(status, approves_at, now())" is as indexable as the comparisons
-- it stands for (commissions_status_list_idx ends with approves_at).
create function commission_due(status text, approves_at timestamptz, at timestamptz) returns boolean
language sql immutable parallel safe
as $$ select status = 'pending' and approves_at is not null and approves_at <= at $$;

-- The status an entry shows at "at": its stored status, or approved when due.
create function commission_status_at(status text, approves_at timestamptz, at timestamptz) returns text
language sql immutable parallel safe
as $$ select case when commission_due(status, approves_at, at) then 'approved' else status end $$;

create table payouts (
  id uuid not null,
  organization_id uuid not null,
  affiliate_id uuid not null,
  program_id uuid not null,
  currency char(3) not null,
  amount numeric not null,
  status text not null,
  commission_count integer not null,
  reference text,
  created_at timestamptz default now() not null,
  paid_at timestamptz,
  canceled_at timestamptz,
  constraint payouts_amount_check check (amount > 0),
  constraint payouts_commission_count_check check (commission_count > 0),
  constraint payouts_status_check check (status in ('pending', 'paid', 'canceled')),
  constraint payouts_pkey primary key (id, organization_id),
  constraint payouts_membership_fkey foreign key (affiliate_id, program_id, organization_id) references affiliates (id, program_id, organization_id)
);
create index payouts_list_idx on payouts (organization_id, created_at desc, id desc);

create table commissions (
  id uuid not null,
  organization_id uuid not null,
  type text not null,
  status text not null,
  amount numeric not null,
  currency char(3) not null,
  affiliate_id uuid not null,
  program_id uuid not null,
  conversion_id uuid,
  customer_id text,
  description text,
  rejection_reason text,
  approves_at timestamptz,
  approved_at timestamptz,
  payout_id uuid,
  created_at timestamptz default now() not null,
  updated_at timestamptz default now() not null,
  rate jsonb,
  hold_reasons jsonb,
  constraint commissions_adjustment_described check ((type <> 'adjustment') or (description is not null)),
  constraint commissions_amount_sign check (((type = 'sale') and (amount > 0)) or ((type = 'clawback') and (amount < 0)) or ((type = 'adjustment') and (amount <> 0))),
  constraint commissions_conversion_link check ((type = 'adjustment') = (conversion_id is null)),
  constraint commissions_payout_only_when_paid check ((payout_id is null) or (status = 'paid')),
  constraint commissions_status_check check (status in ('pending', 'approved', 'paid', 'reversed', 'rejected', 'on_hold')),
  constraint commissions_type_check check (type in ('sale', 'clawback', 'adjustment')),
  constraint commissions_pkey primary key (id, organization_id),
  constraint commissions_payout_id_fkey foreign key (payout_id, organization_id) references payouts (id, organization_id),
  constraint commissions_conversion_fkey foreign key (conversion_id, organization_id) references conversions (id, organization_id),
  constraint commissions_membership_fkey foreign key (affiliate_id, program_id, organization_id) references affiliates (id, program_id, organization_id)
);
create index commissions_clawbacks_idx on commissions (conversion_id) where (type = 'clawback');
create index commissions_created_at_brin on commissions using brin (created_at);
create index commissions_list_idx on commissions (organization_id, created_at desc, id desc);
create unique index commissions_one_sale_per_conversion on commissions (conversion_id, organization_id) where (type = 'sale');
create index commissions_payout_idx on commissions (payout_id) where (payout_id is not null);
create index commissions_status_list_idx on commissions (organization_id, status, created_at desc, id desc, approves_at);
create index commissions_unpaid_idx on commissions (organization_id, affiliate_id, program_id, currency) where ((payout_id is null) and (status in ('pending', 'approved')));

create table payout_items (
  organization_id uuid not null,
  commission_id uuid not null,
  payout_id uuid not null,
  constraint payout_items_pkey primary key (organization_id, commission_id),
  constraint payout_items_commission_fkey foreign key (commission_id, organization_id) references commissions (id, organization_id),
  constraint payout_items_payout_fkey foreign key (payout_id, organization_id) references payouts (id, organization_id)
);
`;
