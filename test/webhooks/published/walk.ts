import { expect } from 'vitest';
import type { Merchant } from '../helpers.js';
import type { Signed } from '../signers.js';

/** Delivers a signed event and expects it answered 200 with this outcome; returns the receipt. */
export async function expectOutcome(delivery: Signed, outcome: 'processed' | 'ignored' | 'duplicate') {
  const res = await delivery.send();
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body.data.webhook.outcome, res.body.data.webhook.detail).toBe(outcome);
  return res.body.data.webhook as { event_id: string; event_type: string; outcome: string; detail: string | null };
}

/** A conversion as the merchant's API shows it, by its external id. */
export async function conversionOf(m: Merchant, externalId: string) {
  const res = await m.api.get(`/api/conversions/${encodeURIComponent(externalId)}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data.conversion;
}

/** A customer as the merchant's API shows it, by the provider's customer id. */
export async function customerOf(m: Merchant, customerId: string) {
  const res = await m.api.get(`/api/customers/${encodeURIComponent(customerId)}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data.customer;
}

/** Unix seconds of an ISO time: walks place renewals a billing period after the first payment. */
export const unix = (iso: string) => Math.floor(Date.parse(iso) / 1000);
