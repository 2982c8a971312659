import type { MikroORM } from '@mikro-orm/postgresql';
import type { PayoutStatus } from '@affiliate-attribution/contract';
import { sql as raw } from 'kysely';
import { pageNewestFirst } from '../../db/created-order.js';
import { kyselyOf, laggingReadsOf, type StoredRow } from '../../db/database.js';
import { findOwnedRow, type OwnedTable } from '../../db/owned-row.js';
import { Sql } from '../../db/sql.js';
import { ConflictError } from '../../http/errors.js';
import type { CursorPosition } from '../../http/pagination.js';
import type { PayoutFileRow } from './payout-files.js';
import { eventsOf } from '../events/outbox.js';

/** A payout file's row as stored: its times as timestamps (the service writes them as ISO-8601, like every answer). */
export type StoredPayoutFileRow = Omit<PayoutFileRow, 'created_at' | 'paid_at'> & { created_at: Date; paid_at: Date | null };

export type PayoutRecord = StoredRow<'payouts'>;

const PAYOUTS_BY_ID: OwnedTable = { table: 'payouts', notFound: 'Payout not found' };

export interface PayoutScope {
  program_id?: string;
  currency?: string;
  /** Only entries approved before this time. */
  approved_before?: Date;
}

export interface PayoutFilter {
  status?: PayoutStatus;
  affiliate_id?: string;
  program_id?: string;
  currency?: string;
}

/**
 * Gathering payouts, one statement (so one snapshot and one set of row locks):
 * - `payable`: every entry a payout may carry, locked. An entry is payable when approved (stored,
 *   or pending past its approves_at: commission-lifecycle.ts effectiveStatus) and in no payout.
 *   Under READ COMMITTED, a concurrent call that locked an entry first makes this one wait, then
 *   see it taken (payout_id set) and leave it out: no entry is ever in two payouts.
 * - `eligible`: one group per (affiliate, program, currency), netted (clawbacks and negative
 *   adjustments included); kept when above 0 and, in the program's currency, at least its
 *   minimum_payout. The minimum is an amount in the program's currency and the service converts
 *   nothing, so a group in another currency (sales reported in it) is paid at any positive net.
 *   The other groups wait (a negative net carries over to the next run).
 * - `created` and `claimed`: the payouts, and their entries marked (approved, payout_id); a
 *   data-modifying CTE runs whether or not the final SELECT reads it. `eligible` is read twice, so
 *   it is computed once: each group keeps its one generated payout id. Each group carries its
 *   entries' row addresses (ctid): they are locked by `payable`, so they stay where they are until
 *   this statement updates them, and marking one is a fetch of that row (a TID scan), neither a
 *   primary-key lookup nor a join over the table (a hash join read all 2 million entries, 1.5 s,
 *   on bench/ledger-seeded.ts's database; joining `payable` back to `eligible` by (affiliate,
 *   program, currency) was planned as a nested loop without statistics, 50 s for 11 000 entries).
 */
export const CREATE_PAYOUTS = `
with payable as (
  select c.ctid as row_ref, c.affiliate_id, c.program_id, c.currency, c.amount
  from commissions c
  where c.organization_id = $1 and c.payout_id is null
    and (c.status = 'approved' or (c.status = 'pending' and c.approves_at <= now()))
    and ($2::uuid is null or c.program_id = $2::uuid)
    and ($3::text is null or c.currency = $3::text)
    and ($4::timestamptz is null or coalesce(c.approved_at, c.approves_at) < $4::timestamptz)
  for update of c
), eligible as (
  select gen_random_uuid() as payout_id, g.*
  from (
    select affiliate_id, program_id, currency, sum(amount) as net, count(*)::int as n, array_agg(row_ref) as row_refs
    from payable group by affiliate_id, program_id, currency
  ) g
  join programs p on p.id = g.program_id
  where g.net > 0 and (g.currency <> p.currency or g.net >= p.minimum_payout)
), created as (
  insert into payouts (id, organization_id, affiliate_id, program_id, currency, amount, status, commission_count, created_at)
  select payout_id, $1, affiliate_id, program_id, currency, net, 'pending', n, now() from eligible
  returning *
), claimed as (
  update commissions c set payout_id = e.payout_id, status = 'approved', updated_at = now()
  from (select payout_id, unnest(row_refs) as row_ref from eligible) e
  where c.ctid = e.row_ref
  returning c.*
), payout_events as (${eventsOf('payout.created', 'created')}
), commission_events as (${eventsOf('commission.updated', 'claimed')}
)
select * from created order by amount desc, id`;

/** The payouts module's only way to the database. */
export class PayoutsRepository {
  constructor(private readonly orm: MikroORM) {}

  /** Creates the payouts of every payable group (CREATE_PAYOUTS); none when nothing qualifies. */
  create(organizationId: string, scope: PayoutScope): Promise<PayoutRecord[]> {
    const values = [organizationId, scope.program_id ?? null, scope.currency ?? null, scope.approved_before ?? null];
    return Sql.of(this.orm)
      .query<PayoutRecord>({ text: CREATE_PAYOUTS, values })
      .then((result) => result.rows);
  }

  /** One page of the organization's payouts, newest first. */
  page(organizationId: string, filter: PayoutFilter, after: CursorPosition | undefined, limit: number): Promise<PayoutRecord[]> {
    let query = laggingReadsOf(this.orm).selectFrom('payouts').selectAll().where('organization_id', '=', organizationId);
    if (filter.status) query = query.where('status', '=', filter.status);
    if (filter.affiliate_id) query = query.where('affiliate_id', '=', filter.affiliate_id);
    if (filter.program_id) query = query.where('program_id', '=', filter.program_id);
    return pageNewestFirst(query, after, limit).execute();
  }

  /** What a payout file says of each payout matching the filter, with its affiliate. */
  fileRows(organizationId: string, filter: PayoutFilter, limit: number): Promise<StoredPayoutFileRow[]> {
    let query = kyselyOf(this.orm)
      .selectFrom('payouts as p')
      .innerJoin('affiliates as a', 'a.id', 'p.affiliate_id')
      .select(['p.id', 'p.affiliate_id', 'p.program_id', 'a.name', 'a.email', 'a.payout_email', 'p.currency', 'p.commission_count', 'p.status', 'p.reference', 'p.created_at', 'p.paid_at'])
      .select(raw<string>`p.amount::text`.as('amount'))
      .where('p.organization_id', '=', organizationId);
    if (filter.status) query = query.where('p.status', '=', filter.status);
    if (filter.program_id) query = query.where('p.program_id', '=', filter.program_id);
    if (filter.currency) query = query.where('p.currency', '=', filter.currency);
    return query.orderBy('p.created_at').orderBy('p.id').limit(limit).execute();
  }

  /** The ownership rule (db/owned-row.ts): 403 for another organization's payout, 404 for none. */
  findOwned(organizationId: string, id: string): Promise<PayoutRecord> {
    return findOwnedRow<PayoutRecord>(Sql.of(this.orm), PAYOUTS_BY_ID, organizationId, id);
  }

  /**
   * A pending payout paid: it and its entries, for good. Paid again: unchanged. Canceled: 409.
   * The payout's row is locked first, so a concurrent cancel waits and then sees it paid.
   */
  markPaid(organizationId: string, id: string, reference: string | undefined): Promise<PayoutRecord> {
    return this.settle(organizationId, id, 'paid', async (sql, payout) => {
      await sql.rows(`with changed as (update commissions set status = 'paid', updated_at = now() where payout_id = ? returning *), ev as (${eventsOf('commission.updated', 'changed')}) select 1`, [payout.id]);
      return sql.one<PayoutRecord>(
        `with changed as (update payouts set status = 'paid', paid_at = now(), reference = coalesce(?, reference) where id = ? returning *), ev as (${eventsOf('payout.paid', 'changed')}) select * from changed`,
        [reference ?? null, payout.id],
      );
    });
  }

  /** A pending payout canceled: its entries released (approved, in no payout). Canceled again: unchanged. Paid: 409. */
  cancel(organizationId: string, id: string): Promise<PayoutRecord> {
    return this.settle(organizationId, id, 'canceled', async (sql, payout) => {
      await sql.rows(`with changed as (update commissions set payout_id = null, updated_at = now() where payout_id = ? returning *), ev as (${eventsOf('commission.updated', 'changed')}) select 1`, [payout.id]);
      return sql.one<PayoutRecord>(`with changed as (update payouts set status = 'canceled', canceled_at = now() where id = ? returning *), ev as (${eventsOf('payout.canceled', 'changed')}) select * from changed`, [payout.id]);
    });
  }

  private settle(organizationId: string, id: string, to: 'paid' | 'canceled', apply: (sql: Sql, payout: PayoutRecord) => Promise<PayoutRecord | undefined>): Promise<PayoutRecord> {
    return Sql.of(this.orm).transaction(async (sql) => {
      const found = await findOwnedRow<PayoutRecord>(sql, PAYOUTS_BY_ID, organizationId, id);
      const payout = (await sql.one<PayoutRecord>(`select * from payouts where id = ? for update`, [found.id]))!;
      if (payout.status === to) return payout;
      if (payout.status !== 'pending') throw new ConflictError(`A ${payout.status} payout cannot be ${to === 'paid' ? 'marked paid' : 'canceled'}`);
      return (await apply(sql, payout))!;
    });
  }
}
