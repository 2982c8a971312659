import { notifyChanges, type CacheChange } from '../../db/change-notifications.js';
import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../../db/sql.js';
import { ConflictError } from '../../http/errors.js';
import { compiled, countRows } from '../reports/report-contributions.js';
import { dropCancelledDeltas, foldIn, type Run } from '../reports/report-fold.js';

/**
 * What holds an import's rows: anything written since that is not the import's own and refers to
 * them, or a change to its own ledger rows. Each is a statement answering how many; any above 0
 * refuses the undo with 409 naming them (shared/spec/imports.md: "nothing has built on since").
 */
/** A statement of the organization `o` and its import `i`. */
type OfImport<R = unknown> = (o: string, i: string) => RawBuilder<R>;

const HOLDS: { what: string; query: OfImport<{ n: number | string }> }[] = [
  {
    what: 'conversions recorded since on imported partners or customers',
    query: (
      o,
      i,
    ) => sql`select count(*)::int as n from conversions v where v.organization_id = ${o} and v.import_id is distinct from ${i}
      and (v.affiliate_id in (select id from affiliates where organization_id = ${o} and import_id = ${i})
        or v.customer_id in (select customer_id from customers where organization_id = ${o} and import_id = ${i}))`,
  },
  {
    what: 'commissions recorded since on imported partners',
    query: (
      o,
      i,
    ) => sql`select count(*)::int as n from commissions k where k.organization_id = ${o} and k.import_id is distinct from ${i}
      and k.affiliate_id in (select id from affiliates where organization_id = ${o} and import_id = ${i})`,
  },
  {
    what: 'payouts created since for imported partners or commissions',
    query: (
      o,
      i,
    ) => sql`select (select count(*) from payouts p where p.organization_id = ${o} and p.import_id is distinct from ${i}
        and p.affiliate_id in (select id from affiliates where organization_id = ${o} and import_id = ${i}))
      + (select count(*) from payout_items i where i.organization_id = ${o}
        and i.commission_id in (select id from commissions where organization_id = ${o} and import_id = ${i})
        and i.payout_id not in (select id from payouts where organization_id = ${o} and import_id = ${i})) as n`,
  },
  {
    what: 'imported commissions approved, paid, rejected or otherwise changed since',
    query: (
      o,
      i,
    ) => sql`select count(*)::int as n from commissions k join imports i on i.id = k.import_id and i.organization_id = k.organization_id
      where k.organization_id = ${o} and k.import_id = ${i} and k.updated_at > coalesce(i.finished_at, now())`,
  },
  {
    what: 'refunds recorded since on imported conversions',
    query: (o, i) =>
      sql`select count(*)::int as n from conversion_refunds r where r.organization_id = ${o} and r.conversion_id in (select id from conversions where organization_id = ${o} and import_id = ${i})`,
  },
  {
    what: 'clicks, coupons or customers recorded since on imported partners',
    query: (
      o,
      i,
    ) => sql`select (select count(*) from clicks c where c.organization_id = ${o} and c.affiliate_id in (select id from affiliates where organization_id = ${o} and import_id = ${i}))
      + (select count(*) from coupons c where c.organization_id = ${o} and c.affiliate_id in (select id from affiliates where organization_id = ${o} and import_id = ${i}))
      + (select count(*) from customers c where c.organization_id = ${o} and c.import_id is distinct from ${i} and c.affiliate_id in (select id from affiliates where organization_id = ${o} and import_id = ${i})) as n`,
  },
];

/** The import's rows the reports count (an import writes no clicks). */
const COUNTED_ROWS: OfImport<{
  customers: string[];
  conversions: string[];
  commissions: string[];
  affiliates: string[];
}> = (
  o,
  i,
) => sql`select array(select id from customers where organization_id = ${o} and import_id = ${i}) as customers,
  array(select id from conversions where organization_id = ${o} and import_id = ${i}) as conversions,
  array(select id from commissions where organization_id = ${o} and import_id = ${i}) as commissions,
  array(select id from affiliates where organization_id = ${o} and import_id = ${i}) as affiliates`;

/**
 * The import's rows taken out of the reports before they are deleted (modules/reports): their
 * contributions subtracted, the scheduled approvals that now cancel out dropped, and the
 * organization's deltas folded in this transaction, so that no summary row is left at zero
 * referring to a partner of the import (they are deleted next).
 */
async function forgetInReports(db: Db, organizationId: string, importId: string): Promise<void> {
  const rows = (await db.one(COUNTED_ROWS(organizationId, importId)))!;
  const { customers, conversions, commissions } = rows;
  const out = countRows(organizationId, { customers, conversions, commissions }, -1);
  if (!out) return;
  await db.rows(compiled(out));
  const run: Run = (query) => db.rows(compiled(query));
  await dropCancelledDeltas(run, organizationId, rows.affiliates);
  await foldIn(run, organizationId);
}

/** The deletes, children first, so that every foreign key is satisfied at each step. */
const DELETES: OfImport[] = [
  // The import's link tokens free again (modules/affiliates/link-tokens.ts): its aliases', and its partners'.
  (o, i) => sql`with gone as (delete from affiliate_link_aliases where organization_id = ${o}
       and (import_id = ${i} or affiliate_id in (select id from affiliates where organization_id = ${o} and import_id = ${i})) returning token)
   delete from affiliate_link_tokens where organization_id = ${o}
     and (token in (select token from gone) or affiliate_id in (select id from affiliates where organization_id = ${o} and import_id = ${i}))`,
  (o, i) =>
    sql`delete from payout_items where organization_id = ${o} and payout_id in (select id from payouts where organization_id = ${o} and import_id = ${i})`,
  (o, i) => sql`delete from commissions where organization_id = ${o} and import_id = ${i}`,
  (o, i) => sql`delete from conversions where organization_id = ${o} and import_id = ${i}`,
  (o, i) => sql`delete from payouts where organization_id = ${o} and import_id = ${i}`,
  (o, i) => sql`delete from customers where organization_id = ${o} and import_id = ${i}`,
  (o, i) => sql`delete from affiliates where organization_id = ${o} and import_id = ${i}`,
  (o, i) => sql`delete from import_rows where organization_id = ${o} and import_id = ${i}`,
];

/**
 * Undoes an import inside the caller's transaction (the import row locked), its figures taken out
 * of the reports, or refuses with 409 naming what holds it. Its partners' slugs and aliases and its
 * customers are free again: every instance drops what it cached under the organization when the
 * transaction commits; the caller drops this instance's after the commit (the change answered).
 */
export async function undoImport(db: Db, organizationId: string, importId: string): Promise<CacheChange[]> {
  const held: string[] = [];
  for (const hold of HOLDS) {
    const row = await db.one(hold.query(organizationId, importId));
    const n = Number(row?.n ?? 0);
    if (n > 0) held.push(`${n} ${hold.what}`);
  }
  if (held.length) throw new ConflictError(`The import cannot be undone: ${held.join('; ')}`);
  await forgetInReports(db, organizationId, importId);
  for (const statement of DELETES) await db.rows(statement(organizationId, importId));
  const changes: CacheChange[] = [{ kind: 'organization_rows', id: organizationId }];
  await notifyChanges(db, changes);
  return changes;
}
