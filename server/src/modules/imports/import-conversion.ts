import { randomUUID } from 'node:crypto';
import type { SourceCommission } from './import-model.js';
import type { ImportWriter } from './import-writer.js';
import { sql } from 'kysely';

/**
 * A commission's sale as our conversion (import-writer.ts calls it before the commission's entry),
 * with its customer: the sale's amount, refund and date as the source gave them, `created_at` its
 * date (the reports and the portal place it then), and the imported customer's first sale
 * (`first_conversion_at`), a paid one making them a paying customer. Keyed by the sale's source
 * id; an `external_id` already recorded here (tracked before the import) is skipped, saying so.
 */
export async function writeConversion(
  writer: ImportWriter,
  c: SourceCommission,
  affiliateId: string,
): Promise<string | undefined> {
  const { organizationId, programId, importId } = writer.target;
  const sale = c.sale;
  const known = await writer.known('conversions', sale.source_id);
  if (known) {
    writer.counts.conversions.already_present++;
    return known;
  }
  let customerId: string | null = null;
  if (sale.customer) {
    const row = await writer.customer(sale.customer, false, sale.occurred_at);
    if (row) customerId = sale.customer.customer_id;
  }
  const earlier = customerId
    ? await writer.db.one(
        sql`select 1 from conversions where organization_id = ${organizationId} and customer_id = ${customerId} and occurred_at < ${sale.occurred_at} limit 1`,
      )
    : undefined;
  const inserted = await writer.db.one(sql<{
    id: string;
  }>`insert into conversions (id, organization_id, external_id, amount, currency, kind, commission_amount, customer_id, affiliate_id, program_id, refunded_amount, occurred_at, import_id, status, reversed_at, created_at)
     values (${randomUUID()}, ${organizationId}, ${sale.external_id}, ${sale.amount}, ${sale.currency}, ${earlier ? 'recurring' : 'initial'}, ${c.currency === sale.currency ? c.amount : '0'}, ${customerId}, ${affiliateId}, ${programId}, ${sale.refunded_amount}, ${sale.occurred_at}, ${importId},
       case when ${sale.refunded_amount}::numeric >= ${sale.amount}::numeric and ${sale.amount}::numeric > 0 then 'reversed' else 'approved' end,
       case when ${sale.refunded_amount}::numeric >= ${sale.amount}::numeric and ${sale.amount}::numeric > 0 then ${sale.occurred_at}::timestamptz end, ${sale.occurred_at})
     on conflict (external_id, organization_id) do nothing returning id`);
  if (!inserted) {
    writer.skip(
      'conversions',
      sale.source_id,
      `a conversion with external_id "${sale.external_id}" is already recorded here`,
    );
    return undefined;
  }
  writer.counts.conversions.created++;
  writer.fresh.conversions.push(inserted.id);
  await writer.remember('conversions', sale.source_id, inserted.id);
  // The imported customer's first sale, and a paid one makes them a paying customer (charges/decision.ts).
  if (customerId)
    await writer.db
      .rows(sql`update customers set first_conversion_at = least(coalesce(first_conversion_at, ${sale.occurred_at}), ${sale.occurred_at}),
         status = case when status = 'trial' and ${sale.amount}::numeric > 0 then 'active' else status end, updated_at = now()
       where organization_id = ${organizationId} and customer_id = ${customerId} and import_id = ${importId}`);
  return inserted.id;
}
