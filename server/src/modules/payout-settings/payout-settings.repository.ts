import type { MikroORM } from '@mikro-orm/postgresql';
import { findOwnedRow, type OwnedTable } from '../../db/owned-row.js';
import { Db } from '../../db/sql.js';
import { eventsOf } from '../events/outbox.js';
import type { AffiliateRecord } from '../affiliates/affiliates.repository.js';
import { sql } from 'kysely';

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

  private get db(): Db {
    return Db.of(this.orm);
  }

  ownedAffiliate(organizationId: string, id: string): Promise<AffiliateRecord> {
    return findOwnedRow<AffiliateRecord>(this.db, AFFILIATES_BY_ID, organizationId, id);
  }

  partnerRows(organizationId: string, email: string): Promise<PartnerPayoutRow[]> {
    return this.db.rows(
      sql<PartnerPayoutRow>`select id, payout_method, payout_email, stripe_account_id from affiliates where organization_id = ${organizationId} and email = ${email} order by created_at, id`,
    );
  }

  /** The payout rails the merchant configured (integrations). */
  async rails(organizationId: string): Promise<string[]> {
    const rows = await this.db.rows(
      sql<{
        provider: string;
      }>`select provider from integrations where organization_id = ${organizationId} and provider in ('paypal_payouts', 'stripe_connect', 'wise')`,
    );
    return rows.map((r) => r.provider);
  }

  /**
   * The partner's connected account on every membership of theirs that has none yet (one account
   * per person with the merchant), then the account their memberships hold: the first stored wins
   * when two requests race (both asked Stripe under the same idempotency key, so it is the same).
   */
  async storeStripeAccount(organizationId: string, email: string, account: string): Promise<string> {
    return this.db.transaction(async (db) => {
      await db.rows(sql`with changed as (update affiliates set stripe_account_id = ${account} where organization_id = ${organizationId} and email = ${email} and stripe_account_id is null returning *),
         ev as (${sql.raw(eventsOf('affiliate.updated', 'changed', organizationId))}) select 1`);
      const stored = await db.one(
        sql<{
          stripe_account_id: string;
        }>`select stripe_account_id from affiliates where organization_id = ${organizationId} and email = ${email} and stripe_account_id is not null order by created_at, id limit 1`,
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
    await this.db
      .rows(sql`with changed as (update affiliates set payout_method = ${method}, payout_email = coalesce(${payoutEmail ?? null}, payout_email) where organization_id = ${organizationId} and email = ${email} returning *),
       ev as (${sql.raw(eventsOf('affiliate.updated', 'changed', organizationId))}) select 1`);
  }
}
