import type { MikroORM } from '@mikro-orm/postgresql';
import { sql, type RawBuilder } from 'kysely';
import { kyselyOf } from '../../db/database.js';

/** Runs a statement in the fold's transaction (kysely's, or db/sql.ts's: report-contributions.ts compiled). */
export type Run = <R>(query: RawBuilder<R>) => Promise<R[]>;

/**
 * Folding one organization's report deltas (report-contributions.ts) into its summaries, in one
 * transaction, every statement filtered by that organization (one shard on Citus):
 * 1. its report_totals_through row, created or locked: two folds of one organization take turns;
 * 2. its due deltas taken (DELETE ... RETURNING: a delta not yet committed is neither seen nor
 *    taken, so no watermark is needed) and added to report_affiliate_days and report_program_days,
 *    answering their sums per month and (affiliate, currency);
 * 3. the running totals (report_affiliate_totals: what each key counted before each month boundary,
 *    a row per boundary from the one after its first month up to `through`) extended to the month
 *    after the latest one folded (a new boundary a copy of the last), then each month's sums added
 *    to every boundary after it;
 * 4. after a deletion (an import undone), the rows of the keys it touched that are now zero in every
 *    figure deleted: a missing row reads as zero, and none is left referring to a deleted affiliate.
 * The reports read the summaries plus the deltas not taken yet in one snapshot: exact either way.
 */

interface MonthSums {
  month: string;
  affiliate_id: string;
  program_id: string;
  currency: string;
  entries: string;
  [figure: string]: string;
}

const COUNTS = ['entries', 'clicks', 'customers', 'conversions'] as const;
const AMOUNTS = ['revenue', 'refunded', 'pending', 'approved', 'paid', 'reversed', 'rejected', 'on_hold'] as const;
const FIGURES = [...COUNTS, ...AMOUNTS];
const PROGRAM_FIGURES = FIGURES.filter((f) => f !== 'entries');

const list = (figures: readonly string[], fn: (f: string) => string) => sql.raw(figures.map(fn).join(', '));
const allZero = (alias: string, figures: readonly string[]) =>
  sql.raw(figures.map((f) => `${alias}.${f} = 0`).join(' and '));
const anyNonZero = (figures: readonly string[]) => sql.raw(figures.map((f) => `sum(${f}) <> 0`).join(' or '));

/** The month sums as a relation `g`, from the JSON the take answered. */
const monthSums = (rows: readonly MonthSums[]) =>
  sql`jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) as g(month date, affiliate_id uuid, program_id uuid, currency text, ${list(
    FIGURES,
    (f) => `${f} ${(COUNTS as readonly string[]).includes(f) ? 'bigint' : 'numeric'}`,
  )})`;

/**
 * The most deltas one fold step takes: each step's statements stay well inside the service's
 * statement timeout however large the backlog (a bulk load, the migration's first fold).
 */
export const FOLD_STEP_ROWS = 2_000;

/** Folds the organization's due deltas, a step per transaction; answers how many deltas it took. */
export async function foldOrganization(orm: MikroORM, organizationId: string): Promise<number> {
  let taken = 0;
  for (;;) {
    const step = await kyselyOf(orm)
      .transaction()
      .execute((trx) => foldStep(async (query) => (await query.execute(trx)).rows, organizationId, FOLD_STEP_ROWS));
    taken += step;
    if (step < FOLD_STEP_ROWS) return taken;
  }
}

/**
 * foldOrganization inside the caller's transaction (an import's undo folds before it deletes):
 * every due delta, until a step finds none (a step may take fewer than it asked for while the
 * background folder takes its own).
 */
export async function foldIn(run: Run, organizationId: string, stepRows = FOLD_STEP_ROWS): Promise<number> {
  let taken = 0;
  for (;;) {
    const step = await foldStep(run, organizationId, stepRows);
    taken += step;
    if (step === 0) return taken;
  }
}

/** One step: at most `limit` due deltas, taken and folded; answers how many were taken. */
async function foldStep(run: Run, organizationId: string, limit: number): Promise<number> {
  // The boundary as days since 2000-01-01 (date minus date, an immutable operator: Citus allows
  // no STABLE function, such as to_char, in RETURNING).
  const [state] = await run(
    sql<{ through_days: number }>`insert into report_totals_through (organization_id, through)
      values (${organizationId}::uuid, (date_trunc('month', now() at time zone 'UTC' + interval '1 day') + interval '1 month')::date)
      on conflict (organization_id) do update set through = report_totals_through.through
      returning through - date '2000-01-01' as through_days`,
  );
  const through = new Date(Date.UTC(2000, 0, 1) + state.through_days * 86_400_000).toISOString().slice(0, 10);
  const rows = await run(
    sql<MonthSums & { taken: number }>`with taken as (
        delete from report_deltas where organization_id = ${organizationId}::uuid and (due_at, id) in (
          select due_at, id from report_deltas where organization_id = ${organizationId}::uuid and due_at <= now()
          order by due_at, id limit ${limit})
        returning *
      ), days as (
        insert into report_affiliate_days as r (organization_id, day, affiliate_id, currency, program_id, ${list(FIGURES, (f) => f)})
        select ${organizationId}::uuid, day, affiliate_id, currency, min(program_id::text)::uuid, ${list(FIGURES, (f) => `sum(${f})`)}
        from taken group by day, affiliate_id, currency having ${anyNonZero(FIGURES)}
        order by 2, 3, 4
        on conflict (organization_id, day, affiliate_id, currency) do update set ${list(FIGURES, (f) => `${f} = r.${f} + excluded.${f}`)}
      ), program_days as (
        insert into report_program_days as r (organization_id, day, program_id, currency, ${list(PROGRAM_FIGURES, (f) => f)})
        select ${organizationId}::uuid, day, program_id, currency, ${list(PROGRAM_FIGURES, (f) => `sum(${f})`)}
        from taken group by day, program_id, currency having ${anyNonZero(PROGRAM_FIGURES)}
        order by 2, 3, 4
        on conflict (organization_id, day, program_id, currency) do update set ${list(PROGRAM_FIGURES, (f) => `${f} = r.${f} + excluded.${f}`)}
      ), sums as (
        select to_char(date_trunc('month', day::timestamp), 'YYYY-MM-DD') as month, affiliate_id, min(program_id::text) as program_id, currency,
          ${list(FIGURES, (f) => `sum(${f})::text as ${f}`)}
        from taken group by 1, 2, 4 having ${anyNonZero(FIGURES)}
      )
      select c.taken, s.* from (select count(*)::int as taken from taken) c left join sums s on true`,
  );
  const sums = rows.filter((r) => r.month !== null);
  if (sums.length > 0) await addToTotals(run, organizationId, through, sums);
  return rows[0]?.taken ?? 0;
}

async function addToTotals(
  run: Run,
  organizationId: string,
  through: string,
  sums: readonly MonthSums[],
): Promise<void> {
  const latest = sums.reduce((max, s) => (s.month > max ? s.month : max), sums[0].month);
  const target = nextMonth(latest) > through ? nextMonth(latest) : through;
  if (target > through) {
    // Boundaries after `through` start as copies of it: nothing was folded at or after its month.
    await run(sql`insert into report_affiliate_totals
        select t.organization_id, b::date, t.affiliate_id, t.currency, t.program_id, ${list(FIGURES, (f) => `t.${f}`)}
        from report_affiliate_totals t
        cross join generate_series(${through}::date + interval '1 month', ${target}::date::timestamp, interval '1 month') b
        where t.organization_id = ${organizationId}::uuid and t.before = ${through}::date
        on conflict do nothing`);
    await run(
      sql`update report_totals_through set through = ${target}::date where organization_id = ${organizationId}::uuid`,
    );
  }
  // A key's boundaries from the one after the month of its sum (zero until the update below).
  await run(sql`insert into report_affiliate_totals (organization_id, before, affiliate_id, currency, program_id)
      select ${organizationId}::uuid, b::date, k.affiliate_id, k.currency, k.program_id
      from (select affiliate_id, currency, min(program_id::text)::uuid as program_id, min(month) as first_month
            from ${monthSums(sums)} group by 1, 2) k
      cross join lateral generate_series(k.first_month + interval '1 month', ${target}::date::timestamp, interval '1 month') b
      order by 2, 3, 4
      on conflict (organization_id, before, affiliate_id, currency) do nothing`);
  await run(sql`update report_affiliate_totals t set ${list(FIGURES, (f) => `${f} = t.${f} + x.${f}`)}
      from (
        select t2.before, t2.affiliate_id, t2.currency, ${list(FIGURES, (f) => `sum(g.${f}) as ${f}`)}
        from ${monthSums(sums)}
        join report_affiliate_totals t2 on t2.organization_id = ${organizationId}::uuid and t2.affiliate_id = g.affiliate_id
          and t2.currency = g.currency and t2.before > g.month
        group by 1, 2, 3
      ) x
      where t.organization_id = ${organizationId}::uuid and t.before = x.before and t.affiliate_id = x.affiliate_id and t.currency = x.currency`);
  if (sums.some((s) => BigInt(s.entries) < 0n)) await dropZeroRows(run, organizationId, sums);
}

/** The touched keys' summary rows that are zero in every figure (after rows were taken out). */
async function dropZeroRows(run: Run, organizationId: string, sums: readonly MonthSums[]): Promise<void> {
  const affiliates = [...new Set(sums.map((s) => s.affiliate_id))];
  const programs = [...new Set(sums.map((s) => s.program_id))];
  await run(sql`delete from report_affiliate_totals t where t.organization_id = ${organizationId}::uuid
      and t.affiliate_id = any (${affiliates}::uuid[]) and ${allZero('t', FIGURES)}`);
  await run(sql`delete from report_affiliate_days t where t.organization_id = ${organizationId}::uuid
      and t.affiliate_id = any (${affiliates}::uuid[]) and ${allZero('t', FIGURES)}`);
  await run(sql`delete from report_program_days t where t.organization_id = ${organizationId}::uuid
      and t.program_id = any (${programs}::uuid[]) and ${allZero('t', PROGRAM_FIGURES)}`);
}

/** The first day of the month after `month` (YYYY-MM-DD). */
function nextMonth(month: string): string {
  const [y, m] = month.split('-').map(Number);
  return new Date(Date.UTC(y, m, 1)).toISOString().slice(0, 10);
}

/**
 * The organizations with deltas due, at most `limit`. It reads the log's primary key, held
 * approvals (deltas due later) included: what is not folded yet, a few rows per organization
 * between two rounds, plus one per entry still in its hold. The one statement of the read model
 * that is not one organization's: it only finds whose turn it is.
 */
export async function organizationsToFold(orm: MikroORM, limit: number): Promise<string[]> {
  // Read from report_deltas alone (on Citus every shard's; a correlated probe from the
  // organizations reference table is refused): only what is not yet folded is there.
  const { rows } = await sql<{ id: string }>`select organization_id as id from report_deltas
      where due_at <= now() group by organization_id limit ${limit}`.execute(kyselyOf(orm));
  return rows.map((r) => r.id);
}

/**
 * After an import's rows were taken out: the deltas not due yet (held entries' scheduled approvals)
 * of these affiliates that now cancel out, deleted, so that nothing is left referring to an
 * affiliate about to be deleted.
 */
export async function dropCancelledDeltas(
  run: Run,
  organizationId: string,
  affiliateIds: readonly string[],
): Promise<void> {
  if (affiliateIds.length === 0) return;
  await run(sql`delete from report_deltas d using (
      select due_at, day, affiliate_id, currency from report_deltas
      where organization_id = ${organizationId}::uuid and due_at > now() and affiliate_id = any (${affiliateIds}::uuid[])
      group by 1, 2, 3, 4 having ${sql.raw(FIGURES.map((f) => `sum(${f}) = 0`).join(' and '))}
    ) z
    where d.organization_id = ${organizationId}::uuid and d.due_at = z.due_at and d.day = z.day and d.affiliate_id = z.affiliate_id and d.currency = z.currency`);
}
