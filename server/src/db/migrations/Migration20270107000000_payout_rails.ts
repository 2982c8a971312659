import { Migration } from '@mikro-orm/migrations';

/**
 * Payouts that move money (shared/spec/payout-rails.md).
 *
 * - `integrations`: the payout rails' credentials (`paypal_payouts`, `stripe_connect`, `wise`) sit
 *   beside the payment providers' signing secrets, sealed the same way (security/secret-box.ts),
 *   as one sealed JSON document in `credentials`. A row holds exactly one of the two.
 * - `affiliates.payout_method` (`manual` keeps today's export files) and `stripe_account_id` (the
 *   partner's connected account, set by Connect onboarding).
 * - `payouts`: `processing` (handed to a provider), `failed`; the rail it went by (`method`), the
 *   provider's ids (`provider_reference`), why it failed, when it was sent, whether it was only
 *   simulated (test mode), and `send_key`: the idempotency key derived from the payout, written in
 *   the same transaction that makes it `processing` and before the provider is called, so that an
 *   answer lost on the way back is looked up by that key rather than sent again.
 */
export class Migration20270107000000_payout_rails extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table integrations drop constraint integrations_provider_check`);
    this.addSql(
      `alter table integrations add constraint integrations_provider_check check (provider in ('stripe', 'paddle', 'lemonsqueezy', 'polar', 'chargebee', 'paypal_payouts', 'stripe_connect', 'wise'))`,
    );
    this.addSql(`alter table integrations alter column signing_secret drop not null`);
    this.addSql(`alter table integrations add column credentials text`);
    this.addSql(
      `alter table integrations add constraint integrations_secret_check check ((signing_secret is null) <> (credentials is null))`,
    );

    this.addSql(`alter table affiliates add column payout_method text not null default 'manual'`);
    this.addSql(
      `alter table affiliates add constraint affiliates_payout_method_check check (payout_method in ('paypal', 'stripe', 'wise', 'manual'))`,
    );
    this.addSql(`alter table affiliates add column stripe_account_id text`);

    this.addSql(`alter table payouts drop constraint payouts_status_check`);
    this.addSql(
      `alter table payouts add constraint payouts_status_check check (status in ('pending', 'processing', 'paid', 'failed', 'canceled'))`,
    );
    this.addSql(`alter table payouts add column method text not null default 'manual'`);
    this.addSql(
      `alter table payouts add constraint payouts_method_check check (method in ('paypal', 'stripe', 'wise', 'manual'))`,
    );
    this.addSql(`alter table payouts add column send_key text`);
    this.addSql(`alter table payouts add column provider_reference text`);
    this.addSql(`alter table payouts add column failure_reason text`);
    this.addSql(`alter table payouts add column sent_at timestamptz`);
    this.addSql(`alter table payouts add column failed_at timestamptz`);
    this.addSql(`alter table payouts add column simulated boolean not null default false`);
    this.addSql(
      `alter table payouts add constraint payouts_sent_check check (status not in ('processing', 'failed') or (send_key is not null and sent_at is not null))`,
    );
    // The reconciliation's scan (jobs: payouts in flight, oldest first) and the webhooks' lookup by the provider's id.
    this.addSql(`create index payouts_processing_idx on payouts (sent_at) where status = 'processing'`);
    this.addSql(
      `create index payouts_provider_reference_idx on payouts (organization_id, provider_reference) where provider_reference is not null`,
    );
  }
}
