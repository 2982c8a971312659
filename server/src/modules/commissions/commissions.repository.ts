import type { MikroORM } from '@mikro-orm/postgresql';
import type { CommissionEntryType, CommissionStatus } from '@affiliate-attribution/contract';
import { sql as raw, type ExpressionBuilder, type Kysely, type RawBuilder } from 'kysely';
import { pageNewestFirst } from '../../db/created-order.js';
import { kyselyOf, readFromReplica, type NewRow, type StoredRow, type Tables } from '../../db/database.js';
import { findOwnedRow, type OwnedTable } from '../../db/owned-row.js';
import { Db } from '../../db/sql.js';
import type { CursorPosition } from '../../http/pagination.js';
import { dueSql, refundEffect } from './commission-lifecycle.js';
import { recordEvents, withEvents } from '../events/outbox.js';
import { payoutRunLock } from '../payouts/payouts.repository.js';
import { newRowId } from '../../db/row-ids.js';
import { compiled, countRows } from '../reports/report-contributions.js';

/** An entry as stored, with the payout that carries it (payout_items: resolvePayouts), when read through it. */
export type CommissionRecord = StoredRow<'commissions'> & { payout_id?: string | null };

const COMMISSIONS_BY_ID: OwnedTable = { table: 'commissions', notFound: 'Commission not found' };

export interface CommissionFilter {
  status?: CommissionStatus;
  type?: CommissionEntryType;
  affiliate_id?: string;
  program_id?: string;
  created_after?: Date;
  created_before?: Date;
}

/**
 * A filter on the stored status, with the ledger's one derived transition (commission-lifecycle.ts
 * effectiveStatus): a pending entry whose approves_at has passed (`due`) is approved. So the
 * effective `pending` is pending and not due, and the effective `approved` is the stored
 * `approved` and `due` together (see page). A null approves_at (auto_approve false: waiting for
 * the merchant) is never due, so `pending` is spelled as its own positive condition: `not (due)`
 * is NULL for such an entry, and a WHERE drops NULL, which hid every entry awaiting approval.
 */
function whereStoredStatus(status: CommissionStatus | 'due') {
  return (eb: ExpressionBuilder<Tables, 'commissions'>) => {
    const due = raw<boolean>`${raw.raw(dueSql('commissions'))}`;
    // The stored status first: the walk of commissions_status_list_idx; the rule then decides.
    if (status === 'due') return eb.and([eb('status', '=', 'pending'), due]);
    if (status === 'pending') return eb.and([eb('status', '=', 'pending'), eb.not(due)]);
    return eb('status', '=', status);
  };
}

/**
 * The sale entries of conversions a statement has just inserted, as a data-modifying CTE of that
 * same statement (the conversions repository's batched writes): one `pending` entry per inserted
 * conversion whose commission is above zero (commission-lifecycle.ts earnsSaleEntry), held until
 * the input's `sale_approves_at` (saleApprovesAt; null waits for the merchant), with the input's
 * `sale_rate`; `on_hold` instead when the input's `sale_hold_reasons` is set (charges/fraud.ts). `inserted` names
 * the CTE returning the new conversion rows, `input` the one carrying `id`, `sale_id` (the entry's
 * id, made by db/row-ids.ts) and `sale_approves_at` per conversion. No conversion is committed
 * without its entry, nor an entry without its conversion, and no second round trip is made.
 */
export function saleEntriesOfInserted(inserted: string, input: string): RawBuilder<unknown> {
  return raw`insert into commissions (id, organization_id, type, status, amount, currency, affiliate_id, program_id, conversion_id, customer_id, approves_at, created_at, updated_at, rate, hold_reasons)
    select i.sale_id, x.organization_id, 'sale', case when i.sale_hold_reasons is null then 'pending' else 'on_hold' end, x.commission_amount, x.currency, x.affiliate_id, x.program_id, x.id, x.customer_id, i.sale_approves_at, x.created_at, x.created_at, i.sale_rate, i.sale_hold_reasons
    from ${raw.table(inserted)} x join ${raw.table(input)} i on i.id = x.id
    where x.commission_amount > 0
    returning *`;
}

/** The conversion a refund changed, as its sale entry needs it. */
export interface RefundedSale {
  organization_id: string;
  id: string;
  affiliate_id: string;
  program_id: string;
  currency: string;
  customer_id: string | null;
  /** The conversion's commission before this refund and after it. */
  commissionBefore: string;
  commissionAfter: string;
}

/**
 * One page of the organization's entries, newest first (exported for the benchmark's EXPLAIN).
 * Filtered by status, the page is a walk of commissions_status_list_idx (organization_id, status,
 * created_at desc, id desc, approves_at): `approved` merges two such walks, the stored approved
 * entries and the pending ones past their approves_at (the latter tested inside the index: the
 * entries still in their hold are skipped without reading their rows), each stopping after a page.
 * Neither walk depends on statistics.
 */
export function commissionsPage(
  db: Kysely<Tables>,
  organizationId: string,
  filter: CommissionFilter,
  after: CursorPosition | undefined,
  limit: number,
) {
  const walk = (status?: Parameters<typeof whereStoredStatus>[0]) => {
    let query = db.selectFrom('commissions').selectAll().where('organization_id', '=', organizationId);
    if (status) query = query.where(whereStoredStatus(status));
    if (filter.type) query = query.where('type', '=', filter.type);
    if (filter.affiliate_id) query = query.where('affiliate_id', '=', filter.affiliate_id);
    if (filter.program_id) query = query.where('program_id', '=', filter.program_id);
    if (filter.created_after) query = query.where('created_at', '>=', filter.created_after);
    if (filter.created_before) query = query.where('created_at', '<', filter.created_before);
    return pageNewestFirst(query, after, limit);
  };
  if (filter.status !== 'approved') return walk(filter.status);
  const merged = db
    .selectFrom(walk('approved').as('stored'))
    .selectAll()
    .unionAll(db.selectFrom(walk('due').as('due')).selectAll());
  return db
    .selectFrom(merged.as('approved'))
    .selectAll()
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit + 1);
}

/** The payout carrying an entry, as payout_items holds it (Migration20270117100000_one_payout_membership). */
interface PendingPayoutOf {
  commission_id: string;
  payout_id: string;
  payout_created_at: Date;
}

/** Stored statuses an entry in a payout may have: approved, or pending past its approves_at, while its payout is pending or in flight; paid once it is paid. */
const MAY_BE_IN_PAYOUT = new Set(['approved', 'pending', 'paid']);

/**
 * The payouts carrying some of `rows` (of one organization): payout_items is the one record of
 * which payout holds an entry (the entries' own rows are not written when a run takes them: it
 * would rewrite 158 000 entries). undefined when no row can be in one.
 */
function payoutsOf(organizationId: string, rows: readonly CommissionRecord[]): RawBuilder<PendingPayoutOf> | undefined {
  const ids = rows.filter((r) => MAY_BE_IN_PAYOUT.has(r.status)).map((r) => r.id);
  if (ids.length === 0) return undefined;
  return raw<PendingPayoutOf>`select i.commission_id, i.payout_id, p.created_at as payout_created_at
    from payout_items i join payouts p on p.id = i.payout_id and p.organization_id = i.organization_id
    where i.organization_id = ${organizationId} and i.commission_id = any (${ids}::uuid[])`;
}

/** The rows as the API shows them: in a payout, its id, and updated_at no earlier than the payout's creation. */
function withPayouts<R extends CommissionRecord>(rows: R[], found: readonly PendingPayoutOf[]): R[] {
  if (found.length === 0) return rows;
  const byEntry = new Map(found.map((f) => [f.commission_id, f]));
  return rows.map((r) => {
    const f = byEntry.get(r.id);
    if (!f) return r;
    return {
      ...r,
      payout_id: f.payout_id,
      updated_at: f.payout_created_at.getTime() > r.updated_at.getTime() ? f.payout_created_at : r.updated_at,
    };
  });
}

/** The rows with their payouts, read through `db` (a transaction's, to read them after its locks). */
export async function resolvePayouts<R extends CommissionRecord>(
  db: Kysely<Tables>,
  organizationId: string,
  rows: R[],
): Promise<R[]> {
  const query = payoutsOf(organizationId, rows);
  return query ? withPayouts(rows, (await query.execute(db)).rows) : rows;
}

/** The commissions module's only way to the database. */
export class CommissionsRepository {
  constructor(private readonly orm: MikroORM) {}

  /** A new entry (an adjustment), counted in the reports in its transaction (modules/reports). */
  insert(row: NewRow<'commissions'>): Promise<CommissionRecord> {
    return kyselyOf(this.orm)
      .transaction()
      .execute(async (trx) => {
        const insert = trx.insertInto('commissions').values(row).returningAll();
        const [inserted] = (await withEvents(insert, 'commission.created', row.organization_id).execute(trx)).rows;
        await countRows(inserted.organization_id, { commissions: [inserted.id] }, 1)!.execute(trx);
        return inserted;
      });
  }

  /** One page of the organization's entries, newest first (commissionsPage). */
  async page(
    organizationId: string,
    filter: CommissionFilter,
    after: CursorPosition | undefined,
    limit: number,
  ): Promise<CommissionRecord[]> {
    return readFromReplica(this.orm, 'GET /api/commissions', async (source) => {
      const db = kyselyOf(source);
      const rows = (await commissionsPage(db, organizationId, filter, after, limit).execute()) as CommissionRecord[];
      return resolvePayouts(db, organizationId, rows);
    });
  }

  /** The affiliate credited by an adjustment, with its program's currency; undefined unless it is this organization's. */
  findAffiliate(
    organizationId: string,
    affiliateId: string,
  ): Promise<{ id: string; program_id: string; currency: string } | undefined> {
    return kyselyOf(this.orm)
      .selectFrom('affiliates as a')
      .innerJoin('programs as p', (join) =>
        join.onRef('p.id', '=', 'a.program_id').onRef('p.organization_id', '=', 'a.organization_id'),
      )
      .select(['a.id', 'a.program_id', 'p.currency'])
      .where('a.organization_id', '=', organizationId)
      .where('a.id', '=', affiliateId)
      .executeTakeFirst();
  }

  /** The ownership rule (db/owned-row.ts): 403 for another organization's entry, 404 for none. */
  async findOwned(organizationId: string, id: string): Promise<CommissionRecord> {
    const row = await findOwnedRow<CommissionRecord>(Db.of(this.orm), COMMISSIONS_BY_ID, organizationId, id);
    return (await resolvePayouts(kyselyOf(this.orm), organizationId, [row]))[0];
  }

  /**
   * Changes an owned entry in one transaction, its row locked (and a sale's clawbacks with it):
   * `change` decides from the stored rows, their pending payouts included (and may refuse, or
   * answer undefined for no change); concurrent changes of the entry wait for this one and see its
   * outcome, and so does a payout run (the transaction holds payoutRunLock shared, taken first: a
   * run either committed before, and the entry is seen in its payout, or starts after this one).
   * A sale rejected takes its clawbacks with it (commission-lifecycle.ts rejected).
   */
  updateOwned(
    organizationId: string,
    id: string,
    change: (
      current: CommissionRecord,
      clawbacks: CommissionRecord[],
    ) => Partial<Pick<CommissionRecord, 'status' | 'approved_at' | 'rejection_reason'>> | undefined,
  ): Promise<CommissionRecord> {
    return Db.of(this.orm).transaction(async (db) => {
      const found = await findOwnedRow<CommissionRecord>(db, COMMISSIONS_BY_ID, organizationId, id);
      await db.rows({ compile: () => payoutRunLock('shared', organizationId).compile(kyselyOf(this.orm)) });
      const [locked] = await db.rows(
        kyselyOf(this.orm)
          .selectFrom('commissions')
          .selectAll()
          .where('organization_id', '=', organizationId)
          .where('id', '=', found.id)
          .forUpdate(),
      );
      const lockedClawbacks =
        locked.type === 'sale' && locked.conversion_id
          ? await db.rows(
              kyselyOf(this.orm)
                .selectFrom('commissions')
                .selectAll()
                .where('organization_id', '=', organizationId)
                .where('conversion_id', '=', locked.conversion_id)
                .where('type', '=', 'clawback')
                .where('status', '!=', 'rejected')
                .orderBy('id')
                .forUpdate(),
            )
          : [];
      const [current, ...clawbacks] = await this.pendingPayouts(db, organizationId, [locked, ...lockedClawbacks]);
      const changes = change(current, clawbacks);
      if (!changes) return current;
      // What the entries count in the reports moves with them (modules/reports): out before, in after.
      const changing = {
        commissions: [found.id, ...(changes.status === 'rejected' ? clawbacks.map((c) => c.id) : [])],
      };
      await db.rows(compiled(countRows(organizationId, changing, -1)!));
      // commission.updated events ride each update (modules/events/outbox.ts).
      const update = kyselyOf(this.orm)
        .updateTable('commissions')
        .set({ ...changes, updated_at: raw<Date>`now()` })
        .where('organization_id', '=', organizationId)
        .where('id', '=', found.id)
        .returningAll();
      const [updated] = await db.rows({
        compile: () => withEvents(update, 'commission.updated', organizationId).compile(kyselyOf(this.orm)),
      });
      if (changes.status === 'rejected' && clawbacks.length > 0) {
        const rejectClawbacks = kyselyOf(this.orm)
          .updateTable('commissions')
          .set({ status: 'rejected', rejection_reason: changes.rejection_reason ?? null, updated_at: raw<Date>`now()` })
          .where('organization_id', '=', organizationId)
          .where(
            'id',
            'in',
            clawbacks.map((c) => c.id),
          )
          .returningAll();
        await db.rows({
          compile: () => withEvents(rejectClawbacks, 'commission.updated', organizationId).compile(kyselyOf(this.orm)),
        });
      }
      await db.rows(compiled(countRows(organizationId, changing, 1)!));
      return (await this.pendingPayouts(db, organizationId, [updated]))[0];
    });
  }

  /** resolvePayouts on a transaction's connection. */
  private async pendingPayouts(db: Db, organizationId: string, rows: CommissionRecord[]): Promise<CommissionRecord[]> {
    const query = payoutsOf(organizationId, rows);
    return query ? withPayouts(rows, await db.rows({ compile: () => query.compile(kyselyOf(this.orm)) })) : rows;
  }

  /**
   * A refund's effect on its conversion's sale entry (commission-lifecycle.ts refundEffect), in the
   * refund's transaction `trx`, which holds the conversion's lock: it takes payoutRunLock shared,
   * then the entry's, so a payout run taking the entry either committed first (the refund claws
   * back) or starts after the refund and sees the entry reduced or reversed. A conversion without
   * an entry (it earned nothing) has nothing to change.
   */
  async applyRefund(trx: Kysely<Tables>, sale: RefundedSale, now: Date): Promise<void> {
    await payoutRunLock('shared', sale.organization_id).execute(trx);
    const locked = await trx
      .selectFrom('commissions')
      .selectAll()
      .where('organization_id', '=', sale.organization_id)
      .where('conversion_id', '=', sale.id)
      .where('type', '=', 'sale')
      .forUpdate()
      .executeTakeFirst();
    if (!locked) return;
    const [entry] = await resolvePayouts<CommissionRecord>(trx, sale.organization_id, [locked]);
    if (!entry) return;
    const effect = refundEffect(
      {
        status: entry.status,
        amount: String(entry.amount),
        payoutId: entry.payout_id ?? null,
        approvesAt: entry.approves_at ?? null,
      },
      sale.commissionBefore,
      sale.commissionAfter,
    );
    const counted = { commissions: [entry.id] };
    switch (effect.kind) {
      case 'none':
        return;
      case 'reduce':
        await countRows(sale.organization_id, counted, -1)!.execute(trx);
        await recordEvents(
          trx,
          'commission.updated',
          await trx
            .updateTable('commissions')
            .set({ amount: effect.amount, updated_at: now })
            .where('id', '=', entry.id)
            .returningAll()
            .execute(),
        );
        await countRows(sale.organization_id, counted, 1)!.execute(trx);
        return;
      case 'reverse':
        await countRows(sale.organization_id, counted, -1)!.execute(trx);
        await recordEvents(
          trx,
          'commission.updated',
          await trx
            .updateTable('commissions')
            .set({ status: 'reversed', updated_at: now })
            .where('id', '=', entry.id)
            .returningAll()
            .execute(),
        );
        await countRows(sale.organization_id, counted, 1)!.execute(trx);
        return;
      case 'clawback': {
        const clawbackId = newRowId();
        await trx
          .insertInto('commissions')
          .values({
            id: clawbackId,
            organization_id: sale.organization_id,
            type: 'clawback',
            status: 'approved',
            amount: effect.amount,
            currency: sale.currency,
            affiliate_id: sale.affiliate_id,
            program_id: sale.program_id,
            conversion_id: sale.id,
            customer_id: sale.customer_id,
            approved_at: now,
            created_at: now,
            updated_at: now,
          })
          .returningAll()
          .execute()
          .then((rows) => recordEvents(trx, 'commission.created', rows));
        await countRows(sale.organization_id, { commissions: [clawbackId] }, 1)!.execute(trx);
      }
    }
  }
}
