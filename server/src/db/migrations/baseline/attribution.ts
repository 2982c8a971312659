/** The baseline's attribution tables: programs, affiliates (a membership: affiliate, program, organization), their coupons, clicks, customers and conversions, and the partner portal's sign-in. */
export const ATTRIBUTION = `
create table programs (
  id uuid not null,
  organization_id uuid not null,
  name text not null,
  commission_type text not null,
  commission_value numeric not null,
  click_window_days integer not null,
  commission_window_months integer,
  currency char(3) not null,
  created_at timestamptz default now() not null,
  updated_at timestamptz default now() not null,
  hold_days integer default 30 not null,
  auto_approve boolean default true not null,
  minimum_payout numeric default 0 not null,
  attribution_model text default 'last_click' not null,
  commission_max_conversions integer,
  commission_tiers jsonb,
  fraud_rules jsonb default '{"click_flood": true, "self_referral": true, "fast_conversion": false, "disposable_email": true}'::jsonb not null,
  signup text default 'approval' not null,
  terms text,
  website_url text,
  constraint programs_attribution_model_check check (attribution_model in ('last_click', 'first_click')),
  constraint programs_click_window_days_check check (click_window_days >= 0),
  constraint programs_commission_max_conversions_check check (commission_max_conversions >= 1),
  constraint programs_commission_type_check check (commission_type in ('percent', 'flat')),
  constraint programs_commission_value_check check (commission_value >= 0),
  constraint programs_commission_window_months_check check (commission_window_months >= 1),
  constraint programs_hold_days_check check ((hold_days >= 0) and (hold_days <= 365)),
  constraint programs_minimum_payout_check check (minimum_payout >= 0),
  constraint programs_signup_check check (signup in ('open', 'approval', 'closed')),
  constraint programs_pkey primary key (id, organization_id),
  constraint programs_organization_id_fkey foreign key (organization_id) references organizations (id)
);
create index programs_organization_idx on programs (organization_id, created_at, id);

create table affiliates (
  id uuid not null,
  organization_id uuid not null,
  program_id uuid not null,
  email text not null,
  name text,
  slug text not null,
  created_at timestamptz default now() not null,
  status text default 'active' not null,
  payout_email text,
  commission_value numeric,
  portal_sign_in_ip text,
  portal_sign_in_user_agent text,
  terms_accepted_at timestamptz,
  constraint affiliates_status_check check (status in ('active', 'pending', 'disabled')),
  constraint affiliates_membership_key unique (id, program_id, organization_id),
  constraint affiliates_membership_unique unique (organization_id, program_id, email),
  constraint affiliates_pkey primary key (id, organization_id),
  constraint affiliates_slug_unique unique (organization_id, slug),
  constraint affiliates_organization_id_fkey foreign key (organization_id) references organizations (id),
  constraint affiliates_program_id_fkey foreign key (program_id, organization_id) references programs (id, organization_id)
);
create index affiliates_list_idx on affiliates (organization_id, created_at, id);

create table coupons (
  id uuid not null,
  organization_id uuid not null,
  code text not null,
  affiliate_id uuid not null,
  program_id uuid not null,
  created_at timestamptz default now() not null,
  constraint coupons_pkey primary key (id, organization_id),
  constraint coupons_membership_fkey foreign key (affiliate_id, program_id, organization_id) references affiliates (id, program_id, organization_id)
);
create index coupons_affiliate_idx on coupons (organization_id, affiliate_id, created_at);
create unique index coupons_code_unique on coupons (organization_id, lower(code));

create table clicks (
  id uuid not null,
  organization_id uuid not null,
  affiliate_id uuid not null,
  program_id uuid not null,
  cookie_id text not null,
  landing_url text,
  referrer text,
  user_agent text,
  ip text,
  occurred_at timestamptz not null,
  created_at timestamptz default now() not null,
  constraint clicks_cookie_unique unique (organization_id, cookie_id),
  constraint clicks_pkey primary key (id, organization_id),
  constraint clicks_membership_fkey foreign key (affiliate_id, program_id, organization_id) references affiliates (id, program_id, organization_id)
);
create index clicks_created_at_brin on clicks using brin (created_at);
create index clicks_occurred_at_brin on clicks using brin (occurred_at);

create table suppressed_clicks (
  id uuid not null,
  organization_id uuid not null,
  affiliate_id uuid not null,
  program_id uuid not null,
  cookie_id text not null,
  landing_url text,
  referrer text,
  user_agent text,
  ip text,
  occurred_at timestamptz not null,
  created_at timestamptz default now() not null,
  constraint suppressed_clicks_pkey primary key (id, organization_id),
  constraint suppressed_clicks_membership_fkey foreign key (affiliate_id, program_id, organization_id) references affiliates (id, program_id, organization_id)
);
create index suppressed_clicks_created_at_brin on suppressed_clicks using brin (created_at);

create table customers (
  id uuid not null,
  organization_id uuid not null,
  customer_id text not null,
  status text not null,
  affiliate_id uuid not null,
  program_id uuid not null,
  click_id uuid,
  email text,
  name text,
  first_conversion_at timestamptz,
  created_at timestamptz default now() not null,
  updated_at timestamptz default now() not null,
  paid_conversions integer default 0 not null,
  constraint customers_status_check check (status in ('trial', 'active', 'capped', 'canceled')),
  constraint customers_customer_id_key unique (customer_id, organization_id),
  constraint customers_pkey primary key (id, organization_id),
  constraint customers_click_id_fkey foreign key (click_id, organization_id) references clicks (id, organization_id),
  constraint customers_membership_fkey foreign key (affiliate_id, program_id, organization_id) references affiliates (id, program_id, organization_id)
);
create index customers_created_at_brin on customers using brin (created_at);

create table conversions (
  id uuid not null,
  organization_id uuid not null,
  external_id text not null,
  amount numeric not null,
  currency char(3) not null,
  kind text not null,
  commission_amount numeric not null,
  customer_id text,
  affiliate_id uuid not null,
  program_id uuid not null,
  click_id uuid,
  occurred_at timestamptz not null,
  created_at timestamptz default now() not null,
  status text default 'approved' not null,
  refunded_amount numeric default 0 not null,
  gross_commission_amount numeric,
  reversed_at timestamptz,
  constraint conversions_amount_check check (amount >= 0),
  constraint conversions_kind_check check (kind in ('initial', 'recurring')),
  constraint conversions_refunded_amount_check check (refunded_amount >= 0),
  constraint conversions_status_check check (status in ('approved', 'reversed')),
  constraint conversions_external_id_key unique (external_id, organization_id),
  constraint conversions_pkey primary key (id, organization_id),
  constraint conversions_click_fkey foreign key (click_id, organization_id) references clicks (id, organization_id),
  constraint conversions_membership_fkey foreign key (affiliate_id, program_id, organization_id) references affiliates (id, program_id, organization_id)
);
create index conversions_created_at_brin on conversions using brin (created_at);
create index conversions_customer_idx on conversions (organization_id, customer_id, occurred_at desc);
create index conversions_list_idx on conversions (organization_id, occurred_at desc, id desc);

create table conversion_refunds (
  organization_id uuid not null,
  conversion_id uuid not null,
  refund_key text not null,
  amount numeric not null,
  created_at timestamptz default now() not null,
  updated_at timestamptz default now() not null,
  constraint conversion_refunds_amount_check check (amount >= 0),
  constraint conversion_refunds_pkey primary key (organization_id, conversion_id, refund_key),
  constraint conversion_refunds_conversion_id_fkey foreign key (conversion_id, organization_id) references conversions (id, organization_id),
  constraint conversion_refunds_organization_id_fkey foreign key (organization_id) references organizations (id)
);

create table partner_sign_in_links (
  id uuid not null,
  organization_id uuid not null,
  email text not null,
  token_hash text not null,
  expires_at timestamptz not null,
  used_at timestamptz,
  created_at timestamptz default now() not null,
  constraint partner_sign_in_links_pkey primary key (organization_id, id),
  constraint partner_sign_in_links_token_unique unique (organization_id, token_hash),
  constraint partner_sign_in_links_organization_id_fkey foreign key (organization_id) references organizations (id)
);
create index partner_sign_in_links_expiry on partner_sign_in_links (organization_id, expires_at);

create table partner_sessions (
  id uuid not null,
  organization_id uuid not null,
  email text not null,
  token_hash text not null,
  expires_at timestamptz not null,
  ip_address text,
  user_agent text,
  created_at timestamptz default now() not null,
  constraint partner_sessions_pkey primary key (organization_id, id),
  constraint partner_sessions_token_unique unique (organization_id, token_hash),
  constraint partner_sessions_organization_id_fkey foreign key (organization_id) references organizations (id)
);
create index partner_sessions_partner on partner_sessions (organization_id, email);
`;
