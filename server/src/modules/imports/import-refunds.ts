import { randomUUID } from 'node:crypto';
import type { SourceRefund } from './import-model.js';
import type { ImportWriter } from './import-writer.js';
import { compiled, countRows } from '../reports/report-contributions.js';
import { sql } from 'kysely';

/**
 * Writes a refund the source keeps as a row of its own (SourceRefund), inside the page's
 * transaction: its sale's conversion becomes refunded (all of it, or by the refund's amount, never
 * beyond the sale), and what the partner gives back becomes a clawback entry of that sale (paid, in
 * its payout, when the source netted it in one). Keyed `refund:<id>` like every imported row, so a
 * rerun changes nothing; a refund whose sale is not here is skipped, saying so.
 */
export async function writeRefund(writer: ImportWriter, r: SourceRefund): Promise<void> {
  const { organizationId, programId, importId } = writer.target;
  const key = `refund:${r.source_id}`;
  if (await writer.known('conversions', key)) {
    if (r.clawback) writer.counts.commissions.already_present++;
    return;
  }
  const conversionId = await writer.known('conversions', r.sale_source_id);
  if (!conversionId)
    return writer.skip('commissions', r.source_id, `a refund of sale ${r.sale_source_id}, which is not imported`);
  // What the sale counts in the reports moves with its refund (modules/reports): out before, in after.
  const counted = { conversions: [conversionId] };
  await writer.db.rows(compiled(countRows(organizationId, counted, -1)!));
  // The time as a parameter, not now(): Citus allows no STABLE function inside CASE or COALESCE in an UPDATE.
  const sale = (await writer.db.one(sql<{
    affiliate_id: string;
    customer_id: string | null;
  }>`with next as (select id, least(amount, refunded_amount + coalesce(${r.amount}::numeric, amount)) as refunded from conversions where organization_id = ${organizationId} and id = ${conversionId})
     update conversions c set refunded_amount = n.refunded,
       status = case when n.refunded >= c.amount and c.amount > 0 then 'reversed' else c.status end,
       reversed_at = case when n.refunded >= c.amount and c.amount > 0 then coalesce(c.reversed_at, ${new Date()}::timestamptz) else c.reversed_at end
     from next n where c.organization_id = ${organizationId} and c.id = n.id returning c.affiliate_id, c.customer_id`))!;
  await writer.db.rows(compiled(countRows(organizationId, counted, 1)!));
  await writer.remember('conversions', key, conversionId);
  if (!r.clawback) return;
  const { amount, currency, status, payout_source_id } = r.clawback;
  const payoutId =
    status === 'paid'
      ? ((payout_source_id ? await writer.known('payouts', payout_source_id) : undefined) ??
        (await writer.known('payouts', `commission:${r.source_id}`)) ??
        null)
      : null;
  const id = randomUUID();
  const createdAt = r.created_at ?? null;
  await writer.db.rows(
    sql`insert into commissions (id, organization_id, type, status, amount, currency, affiliate_id, program_id, conversion_id, customer_id, approved_at, import_id, created_at)
     values (${id}, ${organizationId}, 'clawback', ${payoutId ? 'paid' : 'approved'}, -(${amount}::numeric), ${currency}, ${sale.affiliate_id}, ${programId}, ${conversionId}, ${sale.customer_id}, coalesce(${createdAt}::timestamptz, now()), ${importId}, coalesce(${createdAt}::timestamptz, now()))`,
  );
  if (payoutId)
    await writer.db.rows(
      sql`insert into payout_items (organization_id, commission_id, payout_id) values (${organizationId}, ${id}, ${payoutId})`,
    );
  writer.counts.commissions.created++;
  writer.fresh.commissions.push(id);
  await writer.remember('commissions', key, id);
}
