import type { InferEntity } from '@mikro-orm/core';
import type { MikroORM } from '@mikro-orm/postgresql';
import { sql, type Kysely } from 'kysely';
import type { RecordedRefund } from '../../attribution/refunds.js';
import type { RefundDecision } from '../../charges/decision.js';
import type { HoldReason } from '../../charges/fraud.js';
import type { AppliedRate } from '../../attribution/program-rules.js';
import { InsertBatcher, writeBatching } from '../../db/batched-insert.js';
import { kyselyOf, readFromReplica, type NewRow, type Tables } from '../../db/database.js';
import { CONVERSIONS_BY_MERCHANT_ID, findOwnedRow } from '../../db/owned-row.js';
import { Db } from '../../db/sql.js';
import { NotFoundError } from '../../http/errors.js';
import type { CommissionsRepository } from '../commissions/commissions.repository.js';
import { recordEvents } from '../events/outbox.js';
import { countRows } from '../reports/report-contributions.js';
import type { CustomerStatus } from '../customers/customers.service.js';
import { ConversionEntity } from './conversion.entity.js';
import {
  ConversionsByClickWrites,
  GuardedConversionWrites,
  type GuardedRow,
  type GuardedWrite,
} from './conversion-writes.js';

/**
 * The conversions module's way to the database, and the only code of the module that touches it:
 * the hot writes (batched across concurrent requests: by click, a plain idempotent insert; by
 * customer, the guarded write: their statements in conversion-writes.ts), the reads, and a refund's transaction. Rows are typed from
 * the entity definitions (conversion.entity.ts, conversion-refund.entity.ts), and the batched
 * statements' columns are those a new conversion's row provides.
 */

export type ConversionRecord = InferEntity<typeof ConversionEntity>;

/** A new conversion as the hot paths write it. */
export type NewConversion = NewRow<'conversions'> & { id: string };

/**
 * A new conversion and what its sale entry is written with (modules/commissions: saleApprovesAt):
 * the entry comes in the same statement, when the commission is above zero.
 */
export interface NewSale {
  conversion: NewConversion;
  /** Its sale entry's id (db/row-ids.ts), used only if the conversion earns an entry. */
  saleId: string;
  saleApprovesAt: Date | null;
  /** The rate its entry records (attribution/program-rules.ts AppliedRate). */
  saleRate: AppliedRate;
  /** Why its entry is held (charges/fraud.ts); undefined: not held. */
  saleHoldReasons: HoldReason[] | undefined;
}

/** The customer state a conversion by customer was decided on, and the state it leaves the customer in. */
export interface CustomerGuard {
  id: string;
  observedFirstConversionAt: Date | null;
  observedStatus: CustomerStatus;
  /** Paid conversions counted (commission_max_conversions): observed, and after this charge. */
  observedPaidConversions: number;
  nextFirstConversionAt: Date;
  nextStatus: CustomerStatus;
  nextPaidConversions: number;
}

export interface GuardedResult {
  /** The customer was still in the observed state: the decision stands (the conversion is inserted unless its external_id exists). */
  guarded: boolean;
  /** undefined: not inserted (not guarded, or the external_id exists). */
  conversion: ConversionRecord | undefined;
}

export interface ConversionFilter {
  customer_id?: string;
  affiliate_id?: string;
  program_id?: string;
  from?: Date;
  to?: Date;
  /** Keyset: only conversions before this (occurred_at, id). */
  before?: { at: Date; id: string };
}

/** row_to_json gives numbers for numeric columns; keep them as the exact decimal text the rest expects. */
function fromJson(row: ConversionRecord): ConversionRecord {
  return { ...row, amount: String(row.amount), commission_amount: String(row.commission_amount) };
}

export class ConversionsRepository {
  /** Conversions by click of concurrent requests, stored together with their sale entries (ConversionsByClickWrites). */
  private readonly insertsByClick: InsertBatcher<NewSale, ConversionRecord | undefined>;
  /** Guarded writes by customer of concurrent requests, one statement for all (GuardedConversionWrites). */
  private readonly guardedWrites: InsertBatcher<GuardedWrite, GuardedRow>;

  constructor(
    private readonly orm: MikroORM,
    /** A refund's effect on the sale's entries, in the refund's transaction (the commissions module's). */
    private readonly commissions: Pick<CommissionsRepository, 'applyRefund'>,
  ) {
    const byClick = new ConversionsByClickWrites();
    this.insertsByClick = new InsertBatcher((sales) => byClick.run(this.orm, sales), {
      ...writeBatching(this.orm),
      groupKey: (sale) => sale.conversion.organization_id,
    });
    const guarded = new GuardedConversionWrites();
    this.guardedWrites = new InsertBatcher((writes) => guarded.run(this.orm, writes), {
      ...writeBatching(this.orm),
      exclusiveKey: (write) => write.customer.id,
      groupKey: (write) => write.conversion.organization_id,
    });
  }

  private db(): Kysely<Tables> {
    return kyselyOf(this.orm);
  }

  /** Inserts a conversion by click, with its sale entry; undefined: its external_id exists already. */
  insertByClick(sale: NewSale): Promise<ConversionRecord | undefined> {
    return this.insertsByClick.add(sale);
  }

  /** Inserts a conversion by customer, with its sale entry, only if the customer is still as observed, and moves the customer on. */
  async insertForCustomer(customer: CustomerGuard, sale: NewSale): Promise<GuardedResult> {
    const row = await this.guardedWrites.add({ customer, ...sale });
    return { guarded: row.guarded, conversion: row.conversion ? fromJson(row.conversion) : undefined };
  }

  findByExternalId(organizationId: string, externalId: string): Promise<ConversionRecord | undefined> {
    return this.db()
      .selectFrom('conversions')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('external_id', '=', externalId)
      .executeTakeFirst();
  }

  /** By the service's UUID or the merchant's external_id; 403 when only another organization has it, else 404. */
  findOwned(organizationId: string, id: string): Promise<ConversionRecord> {
    return findOwnedRow<ConversionRecord>(Db.of(this.orm), CONVERSIONS_BY_MERCHANT_ID, organizationId, id);
  }

  /**
   * A commission tier's metric (attribution/program-rules.ts): the affiliate's distinct customers
   * with a paid conversion, or the gross amount of its conversions in `currency`, whose occurred_at
   * is in [from, to).
   */
  async tierMetric(
    organizationId: string,
    affiliateId: string,
    metric: 'customers' | 'revenue',
    currency: string,
    from: Date,
    to: Date,
  ): Promise<string> {
    const value =
      metric === 'customers'
        ? sql<string>`count(distinct customer_id) filter (where amount > 0)::text`
        : sql<string>`coalesce(sum(amount) filter (where currency = ${currency}), 0)::text`;
    const row = await this.db()
      .selectFrom('conversions')
      .select(value.as('value'))
      .where('organization_id', '=', organizationId)
      .where('affiliate_id', '=', affiliateId)
      .where('occurred_at', '>=', from)
      .where('occurred_at', '<', to)
      .executeTakeFirstOrThrow();
    return row.value;
  }

  /** Newest occurred_at first, at most `limit` rows. */
  list(organizationId: string, filter: ConversionFilter, limit: number): Promise<ConversionRecord[]> {
    return readFromReplica(this.orm, 'GET /api/conversions', (source) => {
      let query = kyselyOf(source).selectFrom('conversions').selectAll().where('organization_id', '=', organizationId);
      if (filter.customer_id) query = query.where('customer_id', '=', filter.customer_id);
      if (filter.affiliate_id) query = query.where('affiliate_id', '=', filter.affiliate_id);
      if (filter.program_id) query = query.where('program_id', '=', filter.program_id);
      if (filter.from) query = query.where('occurred_at', '>=', filter.from);
      if (filter.to) query = query.where('occurred_at', '<', filter.to);
      const before = filter.before;
      if (before)
        query = query.where((eb) => eb(eb.refTuple('occurred_at', 'id'), '<', eb.tuple(before.at, before.id)));
      return query.orderBy('occurred_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
    });
  }

  /**
   * A refund of the conversion `id` in one transaction: the conversion locked (concurrent refunds
   * of one charge are decided one after the other), `decide` given it and the refunds recorded for
   * it, and what it decided stored: the report under its key (keeping the larger amount), and the
   * conversion's new refunded amount, commission and status. A refusal thrown by `decide` writes
   * nothing. `changed` is false when the conversion stays as it was.
   */
  async refund(
    organizationId: string,
    id: string,
    decide: (conversion: ConversionRecord, recorded: readonly RecordedRefund[]) => RefundDecision,
  ): Promise<{ conversion: ConversionRecord; changed: boolean }> {
    const target = await this.findOwned(organizationId, id);
    return Db.of(this.orm).transaction(async ({ kysely: trx }) => {
      const conversion = (await trx
        .selectFrom('conversions')
        .selectAll()
        .where('organization_id', '=', organizationId)
        .where('id', '=', target.id)
        .forUpdate()
        .executeTakeFirst()) as ConversionRecord | undefined;
      if (!conversion) throw new NotFoundError(CONVERSIONS_BY_MERCHANT_ID.notFound);
      const recorded = await trx
        .selectFrom('conversion_refunds')
        .select(['refund_key as key', sql<string>`amount::text`.as('amount')])
        .where('organization_id', '=', organizationId)
        .where('conversion_id', '=', conversion.id)
        .execute();
      const { report, next } = decide(conversion, recorded);
      const now = new Date();
      if (report) {
        await trx
          .insertInto('conversion_refunds')
          .values({
            organization_id: organizationId,
            conversion_id: conversion.id,
            refund_key: report.key,
            amount: report.amount,
            created_at: now,
            updated_at: now,
          })
          .onConflict((conflict) =>
            conflict
              .columns(['organization_id', 'conversion_id', 'refund_key'])
              .doUpdateSet((eb) => ({ amount: eb.ref('excluded.amount'), updated_at: eb.ref('excluded.updated_at') }))
              .where('conversion_refunds.amount', '<', (eb) => eb.ref('excluded.amount')),
          )
          .execute();
      }
      if (!next) return { conversion, changed: false };
      // What the conversion counts in the reports moves with it (modules/reports): out before, in after.
      const counted = { conversions: [conversion.id] };
      await countRows(conversion.organization_id, counted, -1)!.execute(trx);
      const updated = (await trx
        .updateTable('conversions')
        .set(next)
        .where('organization_id', '=', organizationId)
        .where('id', '=', conversion.id)
        .returningAll()
        .executeTakeFirstOrThrow()) as ConversionRecord;
      await countRows(conversion.organization_id, counted, 1)!.execute(trx);
      await recordEvents(trx, 'conversion.refunded', [updated]);
      await this.commissions.applyRefund(
        trx,
        {
          ...updated,
          customer_id: updated.customer_id ?? null,
          commissionBefore: String(conversion.commission_amount),
          commissionAfter: String(updated.commission_amount),
        },
        now,
      );
      return { conversion: updated, changed: true };
    });
  }
}
