import { Migration } from '@mikro-orm/migrations';

/**
 * Payment-provider webhooks: one signing secret per (organization, provider); conversion status
 * and refunds; the provider events already handled (redelivery changes nothing); and payment
 * references (a Stripe payment intent, say) that point at the conversion of their charge, so that
 * a refund announced by payment can find a conversion recorded by invoice.
 */
export class Migration20261201000000_webhooks extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
create table integrations (
  id uuid primary key,
  organization_id uuid not null references organizations (id),
  provider text not null check (provider in ('stripe', 'paddle', 'lemonsqueezy', 'polar', 'chargebee')),
  signing_secret text not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint integrations_provider_unique unique (organization_id, provider)
);

alter table conversions
  add column status text not null default 'approved' check (status in ('approved', 'reversed')),
  add column refunded_amount numeric not null default 0 check (refunded_amount >= 0),
  add column gross_commission_amount numeric(20, 2) null,
  add column reversed_at timestamptz null;

create table conversion_refunds (
  organization_id uuid not null references organizations (id),
  conversion_id uuid not null references conversions (id),
  refund_key text not null,
  amount numeric not null check (amount >= 0),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint conversion_refunds_pkey primary key (organization_id, conversion_id, refund_key)
);

create table webhook_events (
  organization_id uuid not null references organizations (id),
  provider text not null,
  event_id text not null,
  event_type text not null,
  outcome text not null,
  detail text null,
  received_at timestamptz not null default now(),
  constraint webhook_events_pkey primary key (organization_id, provider, event_id)
);

create table payment_references (
  organization_id uuid not null references organizations (id),
  reference text not null,
  external_id text not null,
  created_at timestamptz not null default now(),
  constraint payment_references_pkey primary key (organization_id, reference)
);
`);
  }
}
