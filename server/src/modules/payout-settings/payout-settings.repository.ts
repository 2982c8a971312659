import type { MikroORM } from '@mikro-orm/postgresql';
import { findOwnedRow, type OwnedTable } from '../../db/owned-row.js';
import { Sql } from '../../db/sql.js';
import { eventsOf } from '../events/outbox.js';
import type { AffiliateRecord } from '../affiliates/affiliates.repository.js';

const AFFILIATES_BY_ID: OwnedTable = { table: 'affiliates', notFound: 'Affiliate not found' };

export type PayoutMethod = 'manual' | 'paypal' | 'stripe' | 'wise';

/** A partner's payout details as their memberships hold them (the oldest first). */
export interface PartnerPayoutRow {
  id: string;
  payout_method: PayoutMethod;
  payout_email: string | null;
  stripe_account_id: string | null;
}

/** The payout settings' only way to the database: the affiliates' payout columns, and which rails the merchant set up. */
export class PayoutSettingsRepository {
  constructor(private readonly orm: MikroORM) {}

  private get sql(): Sql {
    return Sql.of(this.orm);
  }

  ownedAffiliate(organizationId: string, id: string): Promise<AffiliateRecord> {
    return findOwnedRow<AffiliateRecord>(this.sql, AFFILIATES_BY_ID, organizationId, id);
  }

  partnerRows(organizationId: string, email: string): Promise<PartnerPayoutRow[]> {
    return this.sql.rows<PartnerPayoutRow>(
      'select id, payout_method, payout_email, stripe_account_id from affiliates where organization_id = ? and email = ? order by created_at, id',
      [organizationId, email],
    );
  }

  /** The payout rails the merchant configured (integrations). */
  async rails(organizationId: string): Promise<string[]> {
    const rows = await this.sql.rows<{ provider: string }>(
      `select provider from integrations where organization_id = ? and provider in ('paypal_payouts', 'stripe_connect', 'wise')`,
      [organizationId],
    );
    return rows.map((r) => r.provider);
  }

  /**
   * The partner's connected account on every membership of theirs that has none yet (one account
   * per person with the merchant), then the account their memberships hold: the first stored wins
   * when two requests race (both asked Stripe under the same idempotency key, so it is the same).
   */
  async storeStripeAccount(organizationId: string, email: string, account: string): Promise<string> {
    return this.sql.transaction(async (sql) => {
      await sql.rows(
        `with changed as (update affiliates set stripe_account_id = ? where organization_id = ? and email = ? and stripe_account_id is null returning *),
         ev as (${eventsOf('affiliate.updated', 'changed', organizationId)}) select 1`,
        [account, organizationId, email],
      );
      const stored = await sql.one<{ stripe_account_id: string }>(
        'select stripe_account_id from affiliates where organization_id = ? and email = ? and stripe_account_id is not null order by created_at, id limit 1',
        [organizationId, email],
      );
      return stored?.stripe_account_id ?? account;
    });
  }

  /** The partner's payout method (and e-mail, when given) on every membership of theirs. */
  async setPartnerMethod(
    organizationId: string,
    email: string,
    method: PayoutMethod,
    payoutEmail: string | undefined,
  ): Promise<void> {
    await this.sql.rows(
      `with changed as (update affiliates set payout_method = ?, payout_email = coalesce(?, payout_email) where organization_id = ? and email = ? returning *),
       ev as (${eventsOf('affiliate.updated', 'changed', organizationId)}) select 1`,
      [method, payoutEmail ?? null, organizationId, email],
    );
  }
}
