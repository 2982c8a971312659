import type { MikroORM } from '@mikro-orm/postgresql';
import type { PayoutMethod, PayoutStatus } from '@affiliate-attribution/contract';
import { sql as raw, type RawBuilder } from 'kysely';
import { pageNewestFirst } from '../../db/created-order.js';
import { effectiveStatusSql } from '../commissions/commission-lifecycle.js';
import { compiled, countRows } from '../reports/report-contributions.js';
import { kyselyOf, readFromReplica, type StoredRow } from '../../db/database.js';
import { findOwnedRow, type OwnedTable } from '../../db/owned-row.js';
import { Db } from '../../db/sql.js';
import { ConflictError } from '../../http/errors.js';
import type { CursorPosition } from '../../http/pagination.js';
import type { PayoutFileRow } from './payout-files.js';
import { eventsOf, subscribedTo } from '../events/outbox.js';
import { payoutHoldSql } from '../tax-forms/tax-form-rules.js';

/** A payout file's row as stored: its times as timestamps (the service writes them as ISO-8601, like every answer). */
export type StoredPayoutFileRow = Omit<PayoutFileRow, 'created_at' | 'paid_at'> & {
  created_at: Date;
  paid_at: Date | null;
};

export type PayoutRecord = StoredRow<'payouts'>;

const PAYOUTS_BY_ID: OwnedTable = { table: 'payouts', notFound: 'Payout not found' };

/** A payout run's parameters: the organization, and the scope's filters (null: any). */
interface PayoutRun {
  organizationId: string;
  programId: string | null;
  currency: string | null;
  approvedBefore: Date | null;
  affiliateId: string | null;
}

export interface PayoutScope {
  program_id?: string;
  currency?: string;
  /** Only entries approved before this time. */
  approved_before?: Date;
  /** Only this affiliate's entries (a failed payout's retry). */
  affiliate_id?: string;
}

export interface PayoutFilter {
  status?: PayoutStatus;
  method?: PayoutMethod;
  affiliate_id?: string;
  program_id?: string;
  currency?: string;
}

/**
 * The lock that serializes an organization's payout runs, and that the changes which must not
 * race a run hold shared (a refund or a rejection of an entry the run may take: commissions
 * repository). A run does not lock the rows of the entries it takes (it writes payout_items), so this is what keeps a refund from reducing an entry between the
 * run's read of its amount and its commit. Transaction-scoped: released at commit or rollback.
 */
export const payoutRunLock = (mode: 'exclusive' | 'shared', organizationId: string): RawBuilder<unknown> =>
  raw`select ${raw.raw(mode === 'shared' ? 'pg_advisory_xact_lock_shared' : 'pg_advisory_xact_lock')}(hashtextextended(${`payout-run:${organizationId}`}, 0))`;

/**
 * Gathering payouts, one statement (one snapshot), run under payoutRunLock:
 * - `payable`: every entry a payout may carry: approved by the rule's SQL definition (commission_status_at:
 *   stored approved, or pending past its approves_at), not paid and in no payout: not among the
 *   organization's payout_items (which also holds paid entries, never candidates), hashed once (a hashed SubPlan, 0.2 µs per entry; a
 *   primary-key probe per entry cost 1 to 2 s for 157 000). The stored statuses it may have are
 *   named too, so that commissions_unpaid_idx (partial: pending or approved) serves it. No
 *   planner setting (an index scan picked without statistics visits the heap at random: ANALYZE
 *   after a bulk load).
 * - `eligible`: one group per (affiliate, program, currency), netted (clawbacks and negative
 *   adjustments included); kept when above 0 and, in the program's currency, at least its
 *   minimum_payout. The minimum is an amount in the program's currency and the service converts
 *   nothing, so a group in another currency (sales reported in it) is paid at any positive net.
 *   The other groups wait (a negative net carries over to the next run). `eligible` is read twice,
 *   so it is computed once: each group keeps its one generated payout id and its entries' ids
 *   (joining `payable` back to `eligible` by (affiliate, program, currency) was planned as a nested
 *   loop without statistics: 50 s for 11 000 entries).
 * - `created` and `items`: the payouts, and one narrow payout_items row per entry (its primary key,
 *   the entry, is the database's "at most one live payout"); the entries' own rows are not written
 *   (rewriting 158 000 of them cost 53 s on bench/ledger-seeded.ts's database). A data-modifying
 *   CTE runs whether or not the final SELECT reads it.
 * - Events: payout.created per payout; commission.updated per entry (its payout_id set) only when
 *   an endpoint subscribes to it, the entries then read by primary key.
 */
const payable = (r: PayoutRun) => raw`payable as materialized (
  select c.id, c.affiliate_id, c.program_id, c.currency, c.amount
  from commissions c
  where c.organization_id = ${r.organizationId}::uuid
    and c.status in ('approved', 'pending') and ${raw.raw(effectiveStatusSql('c'))} = 'approved'
    and (${r.programId}::uuid is null or c.program_id = ${r.programId}::uuid)
    and (${r.currency}::text is null or c.currency = ${r.currency}::text)
    and (${r.approvedBefore}::timestamptz is null or coalesce(c.approved_at, c.approves_at) < ${r.approvedBefore}::timestamptz)
    and (${r.affiliateId}::uuid is null or c.affiliate_id = ${r.affiliateId}::uuid)
    and c.id not in (select i.commission_id from payout_items i where i.organization_id = ${r.organizationId}::uuid)
)`;

/** The payable groups that reach their program's minimum, each with its program `p` and affiliate `a` (for the tax form hold). */
const qualifyingGroups = (r: PayoutRun) => raw`from (
    select affiliate_id, program_id, currency, sum(amount) as net, count(*)::int as n, array_agg(id) as ids
    from payable group by affiliate_id, program_id, currency
  ) g
  join programs p on p.id = g.program_id and p.organization_id = ${r.organizationId}::uuid
  join affiliates a on a.id = g.affiliate_id and a.organization_id = ${r.organizationId}::uuid
  where g.net > 0 and (g.currency <> p.currency or g.net >= p.minimum_payout)`;

export const createPayouts = (r: PayoutRun) => raw<PayoutRecord>`
with ${payable(r)}, eligible as materialized (
  select gen_random_uuid() as payout_id, g.*
  ${qualifyingGroups(r)}
    and ${raw.raw(payoutHoldSql('a', 'p'))} is null
), created as (
  insert into payouts (id, organization_id, affiliate_id, program_id, currency, amount, status, commission_count, created_at, method)
  select e.payout_id, ${r.organizationId}::uuid, e.affiliate_id, e.program_id, e.currency, e.net, 'pending', e.n, now(), a.payout_method
  from eligible e join affiliates a on a.id = e.affiliate_id and a.organization_id = ${r.organizationId}::uuid
  returning *
), items as (
  insert into payout_items (organization_id, commission_id, payout_id)
  select ${r.organizationId}::uuid, t.id, e.payout_id from eligible e cross join lateral unnest(e.ids) t(id) order by t.id
  returning commission_id, payout_id
), payout_events as (${raw.raw(eventsOf('payout.created', 'created', r.organizationId))}
), commission_events as (
  insert into outbound_events (id, organization_id, type, resource, created_at)
  select gen_random_uuid(), ${r.organizationId}::uuid, 'commission.updated', k.resource, statement_timestamp()
  from items i
  cross join lateral (
    select to_jsonb(c) || jsonb_build_object('payout_id', i.payout_id, 'updated_at', now()) as resource
    from commissions c where c.id = i.commission_id and c.organization_id = ${r.organizationId}::uuid) k
  where ${subscribedTo('commission.updated', r.organizationId)}
)
select * from created order by amount desc, id`;

/**
 * The groups a run would have paid but the tax form rule holds (tax-forms/tax-form-rules.ts): same
 * parameters as createPayouts, read after it in its transaction (under the run's lock, which a
 * tax form decision takes shared), so they are exactly the qualifying groups it left.
 */
const heldPayouts = (r: PayoutRun) => raw<HeldPayoutRow>`
with ${payable(r)}
select g.affiliate_id, g.program_id, g.currency, g.net::text as amount, g.n as commission_count, ${raw.raw(payoutHoldSql('a', 'p'))} as reason
  ${qualifyingGroups(r)}
    and ${raw.raw(payoutHoldSql('a', 'p'))} is not null
order by g.net desc, g.affiliate_id, g.program_id, g.currency`;

/** A group held by the tax form rule, as HELD_PAYOUTS reads it. */
export interface HeldPayoutRow {
  affiliate_id: string;
  program_id: string;
  currency: string;
  amount: string;
  commission_count: number;
  reason: 'tax_form_missing' | 'tax_form_submitted' | 'tax_form_rejected';
}

/** A run's statement settings, local to its transaction (see createPayouts). */
const PAYOUT_RUN_SETTINGS = raw`select set_config('work_mem', '64MB', true), set_config('jit', 'off', true)`;

/**
 * A payout's entries (while it is pending): its affiliate's unpaid entries in its program and
 * currency (commissions_unpaid_idx) that payout_items puts in it. Parameters: the payout's
 * organization, id, affiliate, program, currency.
 */
const entriesOfPendingPayout = (p: PayoutRecord) => raw<{ id: string }>`select c.id from commissions c
  join payout_items i on i.organization_id = c.organization_id and i.commission_id = c.id and i.payout_id = ${p.id}
  where c.organization_id = ${p.organization_id} and c.affiliate_id = ${p.affiliate_id} and c.program_id = ${p.program_id} and c.currency = ${p.currency}
    and c.status in ('pending', 'approved')`;

/** The payouts module's only way to the database. */
export class PayoutsRepository {
  constructor(private readonly orm: MikroORM) {}

  /** Creates the payouts of every payable group (CREATE_PAYOUTS), and answers those the tax form rule held; none when nothing qualifies. */
  create(organizationId: string, scope: PayoutScope): Promise<{ created: PayoutRecord[]; held: HeldPayoutRow[] }> {
    return Db.of(this.orm).transaction(async (db) => {
      await this.lockRuns(db, organizationId);
      return this.run(db, organizationId, scope);
    });
  }

  /**
   * A failed payout's retry: its affiliate's payable entries in its program and currency gathered
   * into a new payout, and the failed one told which (`retried_by_payout_id`), in one transaction
   * under the run's lock; so a failed payout is retried once, and two retries at once make one
   * payout. `retried` names the payout when it was retried before (nothing created).
   */
  retry(
    organizationId: string,
    failed: PayoutRecord,
  ): Promise<{ created: PayoutRecord[]; held: HeldPayoutRow[]; retried?: PayoutRecord }> {
    return Db.of(this.orm).transaction(async (db) => {
      await this.lockRuns(db, organizationId);
      const current = (await db.one(
        raw<PayoutRecord>`select * from payouts where id = ${failed.id} and organization_id = ${organizationId} for update`,
      ))!;
      if (current.status !== 'failed' || current.retried_by_payout_id)
        return { created: [], held: [], retried: current };
      const result = await this.run(db, organizationId, {
        affiliate_id: current.affiliate_id,
        program_id: current.program_id,
        currency: current.currency,
      });
      const [next] = result.created;
      if (next)
        await db.rows(
          raw`update payouts set retried_by_payout_id = ${next.id} where organization_id = ${organizationId} and id = ${current.id}`,
        );
      return result;
    });
  }

  /** Taken before the run's statement, so that its snapshot sees what an earlier run committed. */
  private async lockRuns(db: Db, organizationId: string): Promise<void> {
    await db.rows({ compile: () => payoutRunLock('exclusive', organizationId).compile(kyselyOf(this.orm)) });
  }

  private async run(
    db: Db,
    organizationId: string,
    scope: PayoutScope,
  ): Promise<{ created: PayoutRecord[]; held: HeldPayoutRow[] }> {
    const run: PayoutRun = {
      organizationId,
      programId: scope.program_id ?? null,
      currency: scope.currency ?? null,
      approvedBefore: scope.approved_before ?? null,
      affiliateId: scope.affiliate_id ?? null,
    };
    await db.rows(PAYOUT_RUN_SETTINGS);
    const created = await db.rows(createPayouts(run));
    return { created, held: await db.rows(heldPayouts(run)) };
  }

  /** One page of the organization's payouts, newest first. */
  page(
    organizationId: string,
    filter: PayoutFilter,
    after: CursorPosition | undefined,
    limit: number,
  ): Promise<PayoutRecord[]> {
    return readFromReplica(this.orm, 'GET /api/payouts', (source) => {
      let query = kyselyOf(source).selectFrom('payouts').selectAll().where('organization_id', '=', organizationId);
      if (filter.status) query = query.where('status', '=', filter.status);
      if (filter.method) query = query.where('method', '=', filter.method);
      if (filter.affiliate_id) query = query.where('affiliate_id', '=', filter.affiliate_id);
      if (filter.program_id) query = query.where('program_id', '=', filter.program_id);
      return pageNewestFirst(query, after, limit).execute();
    });
  }

  /** What a payout file says of each payout matching the filter, with its affiliate. */
  fileRows(organizationId: string, filter: PayoutFilter, limit: number): Promise<StoredPayoutFileRow[]> {
    let query = kyselyOf(this.orm)
      .selectFrom('payouts as p')
      .innerJoin('affiliates as a', (join) =>
        join.onRef('a.id', '=', 'p.affiliate_id').onRef('a.organization_id', '=', 'p.organization_id'),
      )
      .select([
        'p.id',
        'p.affiliate_id',
        'p.program_id',
        'a.name',
        'a.email',
        'a.payout_email',
        'p.currency',
        'p.commission_count',
        'p.status',
        'p.reference',
        'p.created_at',
        'p.paid_at',
      ])
      .select(raw<string>`p.amount::text`.as('amount'))
      .where('p.organization_id', '=', organizationId);
    if (filter.status) query = query.where('p.status', '=', filter.status);
    if (filter.program_id) query = query.where('p.program_id', '=', filter.program_id);
    if (filter.currency) query = query.where('p.currency', '=', filter.currency);
    return query.orderBy('p.created_at').orderBy('p.id').limit(limit).execute();
  }

  /** The ownership rule (db/owned-row.ts): 403 for another organization's payout, 404 for none. */
  findOwned(organizationId: string, id: string): Promise<PayoutRecord> {
    return findOwnedRow<PayoutRecord>(Db.of(this.orm), PAYOUTS_BY_ID, organizationId, id);
  }

  /**
   * A pending payout paid: it and its entries, for good. Paid again: unchanged. Canceled: 409.
   * The payout's row is locked first, so a concurrent cancel waits and then sees it paid. A payout
   * sent through a rail (`processing`) is paid only by its provider's outcome (`from: 'processing'`,
   * payout-sender.ts), never by hand: the money is in flight.
   */
  markPaid(
    organizationId: string,
    id: string,
    reference: string | undefined,
    from: 'pending' | 'processing' = 'pending',
    providerReference?: string | null,
  ): Promise<PayoutRecord> {
    return this.settle(organizationId, id, 'paid', from, async (db, payout) => {
      // The entries are paid; their payout_items rows stay, the record of the payout that paid them.
      // What they count in the reports moves with them (modules/reports): out before, in after.
      const carried = { commissions: (await db.rows(entriesOfPendingPayout(payout))).map((r) => r.id) };
      const counting = (sign: 1 | -1) => countRows(payout.organization_id, carried, sign);
      const out = counting(-1);
      if (out) await db.rows(compiled(out));
      await db.rows(
        raw`with carried as (${entriesOfPendingPayout(payout)}),
         changed as (update commissions c set status = 'paid', updated_at = now() from carried k where c.id = k.id and c.organization_id = ${payout.organization_id} returning c.*, ${payout.id}::uuid as payout_id),
         ev as (${raw.raw(eventsOf('commission.updated', 'changed', payout.organization_id))}) select 1`,
      );
      const back = counting(1);
      if (back) await db.rows(compiled(back));
      return db.one(
        raw<PayoutRecord>`with changed as (update payouts set status = 'paid', paid_at = now(), reference = coalesce(${reference ?? null}, reference), provider_reference = coalesce(${providerReference ?? null}, provider_reference) where id = ${payout.id} and organization_id = ${payout.organization_id} returning *), ev as (${raw.raw(eventsOf('payout.paid', 'changed', payout.organization_id))}) select * from changed`,
      );
    });
  }

  /**
   * A payout in flight that its provider did not pay: `failed` with the reason, its entries
   * released (in no payout: `approved` as before, so the next payout takes them), `payout.failed`
   * emitted. Failed again: unchanged; paid or canceled: 409.
   */
  markFailed(
    organizationId: string,
    id: string,
    reason: string,
    providerReference?: string | null,
  ): Promise<PayoutRecord> {
    return this.settle(organizationId, id, 'failed', 'processing', async (db, payout) => {
      await this.releaseEntries(db, payout);
      return db.one(
        raw<PayoutRecord>`with changed as (update payouts set status = 'failed', failed_at = now(), failure_reason = ${reason.slice(0, 1000)}, provider_reference = coalesce(${providerReference ?? null}, provider_reference) where id = ${payout.id} and organization_id = ${payout.organization_id} returning *), ev as (${raw.raw(eventsOf('payout.failed', 'changed', payout.organization_id))}) select * from changed`,
      );
    });
  }

  /** A pending payout canceled: its entries released (in no payout, approved as before). Canceled again: unchanged. Paid: 409. */
  cancel(organizationId: string, id: string): Promise<PayoutRecord> {
    return this.settle(organizationId, id, 'canceled', 'pending', async (db, payout) => {
      await this.releaseEntries(db, payout);
      return db.one(
        raw<PayoutRecord>`with changed as (update payouts set status = 'canceled', canceled_at = now() where id = ${payout.id} and organization_id = ${payout.organization_id} returning *), ev as (${raw.raw(eventsOf('payout.canceled', 'changed', payout.organization_id))}) select * from changed`,
      );
    });
  }

  /**
   * The payout's entries leave payout_items: in no payout again, with the status they had (the
   * entries' rows were not written when the payout took them; their updated_at records the change
   * of their payout_id).
   */
  private async releaseEntries(db: Db, payout: PayoutRecord): Promise<void> {
    await db.rows(
      raw`with carried as (${entriesOfPendingPayout(payout)}),
       released as (delete from payout_items i using carried k where i.organization_id = ${payout.organization_id} and i.commission_id = k.id returning i.commission_id),
       changed as (update commissions c set updated_at = now() from released r where c.id = r.commission_id and c.organization_id = ${payout.organization_id} returning c.*, null::uuid as payout_id),
       ev as (${raw.raw(eventsOf('commission.updated', 'changed', payout.organization_id))}) select 1`,
    );
  }

  private settle(
    organizationId: string,
    id: string,
    to: 'paid' | 'canceled' | 'failed',
    from: 'pending' | 'processing',
    apply: (db: Db, payout: PayoutRecord) => Promise<PayoutRecord | undefined>,
  ): Promise<PayoutRecord> {
    return Db.of(this.orm).transaction(async (db) => {
      const found = await findOwnedRow<PayoutRecord>(db, PAYOUTS_BY_ID, organizationId, id);
      const payout = (await db.one(
        raw<PayoutRecord>`select * from payouts where id = ${found.id} and organization_id = ${organizationId} for update`,
      ))!;
      if (payout.status === to) return payout;
      if (payout.status !== from) {
        const action = to === 'paid' ? 'marked paid' : to === 'canceled' ? 'canceled' : 'marked failed';
        const hint =
          payout.status === 'processing' ? ': it was sent through its payout rail, whose outcome decides' : '';
        throw new ConflictError(`A ${payout.status} payout cannot be ${action}${hint}`);
      }
      return (await apply(db, payout))!;
    });
  }
}
