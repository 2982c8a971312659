import type { Conversion } from '@affiliate-attribution/contract';
import { expect } from 'vitest';
import { createMerchant, request } from '../support/api.js';

export type Merchant = Awaited<ReturnType<typeof createMerchant>>;

/** A merchant (org, program at 30 %, affiliate) with a signing secret stored for `provider`. */
export async function merchantWithSecret(
  provider: string,
  secret: string,
  program: Record<string, unknown> = {},
): Promise<Merchant> {
  const m = await createMerchant(program);
  const res = await m.api.put(`/api/integrations/${provider}`, { signing_secret: secret });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return m;
}

export function deliver(provider: string, organizationId: string, rawBody: string, headers: Record<string, string>) {
  return request('POST', `/webhooks/${provider}/${organizationId}`, {
    rawBody,
    headers: { 'content-type': 'application/json', ...headers },
  });
}

/** Everything a redelivery must leave unchanged: conversions (with status/refunds), their commission entries, and customers. */
export async function snapshot(m: Merchant, customerIds: string[] = []) {
  const conversions = await m.api.get('/api/conversions?limit=100');
  expect(conversions.status).toBe(200);
  const commissions = await m.api.get('/api/commissions?limit=100');
  expect(commissions.status).toBe(200);
  const customers = [];
  for (const id of customerIds) {
    const c = await m.api.get(`/api/customers/${encodeURIComponent(id)}`);
    customers.push(c.status === 200 ? c.body.data.customer : c.status);
  }
  const list = conversions.body.data.conversions as Conversion[];
  const total = (field: 'amount' | 'commission_amount' | 'refunded_amount') =>
    list.reduce((sum, c) => sum + Math.round(c[field] * 100), 0) / 100;
  return {
    conversions: list,
    commissions: commissions.body.data.commissions,
    customers,
    totals: {
      count: list.length,
      amount: total('amount'),
      commission: total('commission_amount'),
      refunded: total('refunded_amount'),
    },
  };
}

export const nowSeconds = () => Math.floor(Date.now() / 1000);
