import { describe, expect, it } from 'vitest';
import { createMerchant, type ApiResponse } from '../support/api.js';

const N = 25;

/** N identical requests in flight at once: exactly one creates (201), the rest are 200 deduped. */
async function burst(send: () => Promise<ApiResponse>) {
  const responses = await Promise.all(Array.from({ length: N }, send));
  const statuses = responses.map((r) => r.status).sort();
  expect(
    statuses.filter((s) => s === 201),
    JSON.stringify(responses.find((r) => r.status >= 300)?.body),
  ).toHaveLength(1);
  expect(statuses.filter((s) => s === 200)).toHaveLength(N - 1);
  expect(responses.filter((r) => r.body.deduped === true)).toHaveLength(N - 1);
  const created = responses.find((r) => r.status === 201)!;
  for (const r of responses) expect(r.body.data).toEqual(created.body.data);
  return responses;
}

describe(`idempotency under concurrency (${N} identical requests at once)`, () => {
  it('customers: one record', async () => {
    const m = await createMerchant();
    await burst(() => m.api.post('/api/customers', { customer_id: 'cus_race', ref: m.slug }));
  });

  it('conversions by click: one record', async () => {
    const m = await createMerchant();
    const click = (await m.api.post('/api/clicks', { ref: m.slug })).body.data.click;
    await burst(() =>
      m.api.post('/api/conversions', { external_id: 'race_1', amount: 10, cookie_id: click.cookie_id }),
    );
    expect((await m.api.get('/api/conversions')).body.data.conversions).toHaveLength(1);
  });

  it('recurring conversions by customer: one record, customer updated once', async () => {
    const m = await createMerchant();
    await m.api.post('/api/customers', { customer_id: 'c', ref: m.slug });
    await burst(() => m.api.post('/api/conversions', { external_id: 'race_2', amount: 10, customer_id: 'c' }));
    expect((await m.api.get('/api/conversions?customer_id=c')).body.data.conversions).toHaveLength(1);
  });

  it('first conversion that creates its customer: one conversion, one customer', async () => {
    const m = await createMerchant();
    const click = (await m.api.post('/api/clicks', { ref: m.slug })).body.data.click;
    await burst(() =>
      m.api.post('/api/conversions', { external_id: 'race_3', amount: 10, customer_id: 'new_c', click_id: click.id }),
    );
    expect((await m.api.get('/api/customers/new_c')).body.data.customer.status).toBe('active');
  });

  it('different charges of one customer at once: all recorded, exactly one initial', async () => {
    const m = await createMerchant();
    const click = (await m.api.post('/api/clicks', { ref: m.slug })).body.data.click;
    await m.api.post('/api/customers', { customer_id: 'c', cookie_id: click.cookie_id });
    const responses = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        m.api.post('/api/conversions', {
          external_id: `charge_${i}`,
          amount: 10,
          customer_id: 'c',
          cookie_id: click.cookie_id,
        }),
      ),
    );
    expect(responses.every((r) => r.status === 201)).toBe(true);
    expect(responses.filter((r) => r.body.data.conversion.kind === 'initial')).toHaveLength(1);
  });

  it('affiliates with an explicit slug: one membership, no spurious 409', async () => {
    const m = await createMerchant();
    await burst(() =>
      m.api.post('/api/affiliates', { email: 'racer@example.com', program_id: m.program.id, slug: `racer-${m.slug}` }),
    );
  });

  it('affiliates with a generated slug: one membership', async () => {
    const m = await createMerchant();
    await burst(() => m.api.post('/api/affiliates', { email: 'gen@example.com', program_id: m.program.id }));
  });
});
