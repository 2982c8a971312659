import type { MikroORM } from '@mikro-orm/postgresql';
import type { PayoutHoldReason, PayoutMethod } from '@affiliate-attribution/contract';
import { Db } from '../../db/sql.js';
import { ConflictError } from '../../http/errors.js';
import { holdMessage, payoutHoldSql } from '../tax-forms/tax-form-rules.js';
import type { PayoutRecord } from './payouts.repository.js';
import type { RailMethod } from './rails/rail.js';
import { sql } from 'kysely';

/** A payout with what sending it needs of its affiliate, and what holds it now (its program's require_tax_form). */
export type SendCandidate = PayoutRecord & {
  hold_reason: PayoutHoldReason | null;
  payout_method: PayoutMethod;
  email: string;
  payout_email: string | null;
  name: string | null;
  stripe_account_id: string | null;
  amount_text: string;
  /** The payout's program, named to the partner in what the provider sends them (PayPal's note). */
  program_name: string;
};

const CANDIDATE_COLUMNS = `p.*, p.amount::text as amount_text, a.payout_method, a.email, a.payout_email, a.name, a.stripe_account_id, pg.name as program_name, ${payoutHoldSql('a', 'pg')} as hold_reason
  from payouts p join affiliates a on a.id = p.affiliate_id and a.organization_id = p.organization_id
  join programs pg on pg.id = p.program_id and pg.organization_id = p.organization_id`;

/**
 * Why a payout is not sent while its program's require_tax_form holds it: the hold's own reason
 * (tax-form-rules.ts holdMessage), as the payout run and a retry say it.
 */
export const heldRefusal = (payout: Pick<PayoutRecord, 'id' | 'affiliate_id'>, reason: PayoutHoldReason): string =>
  `Payout ${payout.id}: ${holdMessage(reason)}: its program requires an accepted tax form before paying affiliate ${payout.affiliate_id}; nothing was sent (cancel the payout to keep its commissions approved until the form is accepted)`;

export interface SendPlan {
  id: string;
  method: RailMethod;
  send_key: string;
}

/** The sending side of payouts (payout-sender.ts): which to send, the record made before each call, and those in flight. */
export class PayoutSendsRepository {
  constructor(private readonly orm: MikroORM) {}

  /** The payouts named (any status: the sender says why one cannot go), or every pending payout of an affiliate with a rail. */
  candidates(
    organizationId: string,
    scope: { payout_ids?: string[]; program_id?: string; currency?: string },
  ): Promise<SendCandidate[]> {
    const db = Db.of(this.orm);
    if (scope.payout_ids) {
      return db.rows(
        sql<SendCandidate>`select ${sql.raw(CANDIDATE_COLUMNS)} where p.organization_id = ${organizationId} and p.id = any(${scope.payout_ids}::uuid[]) order by p.created_at, p.id`,
      );
    }
    const programId = scope.program_id ?? null;
    const currency = scope.currency ?? null;
    return db.rows(
      sql<SendCandidate>`select ${sql.raw(CANDIDATE_COLUMNS)} where p.organization_id = ${organizationId} and p.status = 'pending' and a.payout_method <> 'manual'
         and (${programId}::uuid is null or p.program_id = ${programId}::uuid) and (${currency}::text is null or p.currency = ${currency}::text)
       order by p.created_at, p.id limit 1000`,
    );
  }

  /**
   * Every payout of the plans becomes `processing` with its method and idempotency key, in one
   * transaction that commits BEFORE any provider is called: whatever happens to the call (a lost
   * answer, a crash), the payout is known to be in flight under that key and is never sent as
   * new. A payout no longer pending (a concurrent send, a cancel), or held by its program's
   * require_tax_form (a form rejected meanwhile): 409, nothing changes.
   */
  claim(organizationId: string, plans: SendPlan[], simulated: boolean): Promise<PayoutRecord[]> {
    return Db.of(this.orm).transaction(async (db) => {
      const rows =
        await db.rows(sql<PayoutRecord>`update payouts p set status = 'processing', method = x.method, send_key = x.send_key, sent_at = now(), simulated = ${simulated}
           from unnest(${plans.map((p) => p.id)}::uuid[], ${plans.map((p) => p.method)}::text[], ${plans.map((p) => p.send_key)}::text[]) as x(id, method, send_key), affiliates a, programs pg
          where p.organization_id = ${organizationId} and p.id = x.id and p.status = 'pending'
            and a.organization_id = p.organization_id and a.id = p.affiliate_id and pg.organization_id = p.organization_id and pg.id = p.program_id
            and ${sql.raw(payoutHoldSql('a', 'pg'))} is null
          returning p.*`);
      if (rows.length !== plans.length) {
        const claimed = new Set(rows.map((r) => r.id));
        const lost = plans.find((p) => !claimed.has(p.id))!;
        const now = await db.one(
          sql<SendCandidate>`select ${sql.raw(CANDIDATE_COLUMNS)} where p.organization_id = ${organizationId} and p.id = ${lost.id}`,
        );
        if (now?.status === 'pending' && now.hold_reason) throw new ConflictError(heldRefusal(now, now.hold_reason));
        throw new ConflictError(
          `Payout ${lost.id} is no longer pending (sent or canceled meanwhile); nothing was sent`,
        );
      }
      return rows;
    });
  }

  /** The provider's ids of a payout in flight, once known. */
  async recordReference(organizationId: string, id: string, reference: string): Promise<void> {
    await Db.of(this.orm).rows(
      sql`update payouts set provider_reference = ${reference} where organization_id = ${organizationId} and id = ${id} and status = 'processing'`,
    );
  }

  /** A payout in flight with what its rail needs, by id (a webhook's, a reconciliation's). */
  inFlight(organizationId: string, ids: string[]): Promise<SendCandidate[]> {
    return Db.of(this.orm).rows(
      sql<SendCandidate>`select ${sql.raw(CANDIDATE_COLUMNS)} where p.organization_id = ${organizationId} and p.id = any(${ids}::uuid[]) and p.status = 'processing'`,
    );
  }

  /** PayPal payouts in flight of one batch (provider_reference `<batch>` or `<batch>/<item>`). */
  inFlightOfPayPalBatch(organizationId: string, batchId: string): Promise<SendCandidate[]> {
    return Db.of(this.orm)
      .rows(sql<SendCandidate>`select ${sql.raw(CANDIDATE_COLUMNS)} where p.organization_id = ${organizationId} and p.status = 'processing' and p.method = 'paypal'
         and (p.provider_reference = ${batchId} or p.provider_reference like ${`${batchId.replace(/[\\%_]/g, '\\$&')}/%`})`);
  }

  /** A payout of this organization by its provider reference (a Stripe or Wise transfer id), whatever its status. */
  byReference(organizationId: string, method: RailMethod, reference: string): Promise<PayoutRecord | undefined> {
    return Db.of(this.orm).one(
      sql<PayoutRecord>`select * from payouts where organization_id = ${organizationId} and provider_reference = ${reference} and method = ${method} limit 1`,
    );
  }

  /** Payouts in flight across organizations, sent before `sentBefore`, oldest first (payouts_processing_idx). */
  allInFlight(sentBefore: Date, limit: number): Promise<SendCandidate[]> {
    return Db.of(this.orm).rows(
      sql<SendCandidate>`select ${sql.raw(CANDIDATE_COLUMNS)} where p.status = 'processing' and p.simulated = false and p.sent_at < ${sentBefore} order by p.sent_at limit ${limit}`,
    );
  }

  /** Test data lives in a twin organization: `live_organization_id` names its live one (shared/spec/test-mode.md). */
  async isTestOrganization(organizationId: string): Promise<boolean> {
    const row = await Db.of(this.orm).one(
      sql<{
        live_organization_id: string | null;
      }>`select live_organization_id from organizations where id = ${organizationId}`,
    );
    return row?.live_organization_id != null;
  }
}
