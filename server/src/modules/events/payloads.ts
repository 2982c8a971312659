import type { OutboundEventType } from '@affiliate-attribution/contract';
import { toAffiliateDto } from '../affiliates/affiliates.service.js';
import { toCommissionDto } from '../commissions/commissions.service.js';
import { toConversionDto } from '../conversions/conversions.service.js';
import { toCustomerDto } from '../customers/customers.service.js';
import { toPayoutDto } from '../payouts/payouts.service.js';

/**
 * The body of an event: `{ type, timestamp, data: { <resource>: … } }`, the resource exactly as the
 * REST API returns it, made by the resource module's own serializer from the snapshot the outbox
 * row holds (the row as the change wrote it), with `livemode` as the API shows it: its
 * organization's mode (test data's events: false).
 */
type Snapshot = Record<string, unknown>;

const RESOURCES: Record<string, { key: string; dto: (row: Snapshot, at: Date) => unknown }> = {
  affiliate: { key: 'affiliate', dto: (row) => toAffiliateDto(row as never) },
  customer: { key: 'customer', dto: (row) => toCustomerDto(row as never) },
  conversion: { key: 'conversion', dto: (row) => toConversionDto(row as never) },
  // A pending entry's status as it was when the event happened (commission-lifecycle.ts effectiveStatus).
  commission: { key: 'commission', dto: (row, at) => toCommissionDto(row as never, at) },
  payout: { key: 'payout', dto: (row) => toPayoutDto(row as never) },
};

/**
 * The snapshot as the serializers read rows: JSON has no timestamps, so the `…_at` columns (every
 * timestamp column of the schema is named so) come back as Dates; numerics stay as JSON gives them
 * (the serializers take numbers or exact decimal text alike).
 */
function asRow(snapshot: Snapshot): Snapshot {
  const row: Snapshot = { ...snapshot };
  for (const [key, value] of Object.entries(row)) {
    if (key.endsWith('_at') && typeof value === 'string') row[key] = new Date(value);
  }
  return row;
}

export function eventBody(type: OutboundEventType, at: Date, snapshot: Snapshot, livemode: boolean): string {
  const resource = RESOURCES[type.slice(0, type.indexOf('.'))];
  if (!resource) throw new Error(`no serializer for ${type}`);
  const dto = resource.dto(asRow(snapshot), at) as Record<string, unknown>;
  return JSON.stringify({ type, timestamp: at.toISOString(), data: { [resource.key]: { ...dto, livemode } } });
}
