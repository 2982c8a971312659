import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { admin, createMerchant, expectError, request } from '../support/api.js';
import { testServer } from '../support/server.js';

/**
 * A JSON string may carry a lone UTF-16 surrogate (`"\ud800"` is valid JSON), which is not Unicode
 * text: PostgreSQL, like any UTF-8 encoder, stores it as U+FFFD, so "sur\ud800" and "sur\udbff"
 * would become one external_id, one customer, one refund key. Every such string is refused with 400
 * naming the field, before any query; a well-formed pair (an emoji) is text and accepted.
 */
const LONE = ['sur\ud800', 'sur\udbff', '\udc00sur'];
const reason = (field: string) =>
  new RegExp(`^${field.replace(/[.[\]]/g, '\\$&')}: ill-formed Unicode \\(a lone UTF-16 surrogate\\) is not allowed$`);
const uid = (prefix: string) => `${prefix}_${randomUUID()}`;

describe('lone UTF-16 surrogates in a request are refused with 400 naming the field', () => {
  it('POST /api/conversions: external_id, customer_id, cookie_id, coupon; the two ids never merge', async () => {
    const m = await createMerchant();
    for (const id of LONE) {
      expectError(
        await m.api.post('/api/conversions', { external_id: id, amount: 100, ref: m.slug }),
        400,
        reason('external_id'),
      );
      expectError(
        await m.api.post('/api/conversions', { external_id: uid('o'), amount: 100, customer_id: id }),
        400,
        reason('customer_id'),
      );
      expectError(
        await m.api.post('/api/conversions', { external_id: uid('o'), amount: 100, cookie_id: id }),
        400,
        reason('cookie_id'),
      );
      expectError(
        await m.api.post('/api/conversions', { external_id: uid('o'), amount: 100, ref: m.slug, coupon: id }),
        400,
        reason('coupon'),
      );
    }
    expect((await m.api.get('/api/conversions')).body.data.conversions).toEqual([]);
    // A surrogate pair is a character like any other, and stays distinct from U+FFFD.
    const emoji = await m.api.post('/api/conversions', { external_id: 'sur\ud83d\ude00', amount: 100, ref: m.slug });
    expect(emoji.status, JSON.stringify(emoji.body)).toBe(201);
    expect(emoji.body.data.conversion.external_id).toBe('sur\u{1f600}');
    const replacement = await m.api.post('/api/conversions', { external_id: 'sur\ufffd', amount: 50, ref: m.slug });
    expect(replacement.status).toBe(201);
    expect(replacement.body.deduped).toBe(false);
  });

  it('POST /api/customers: customer_id, cookie_id, name, email', async () => {
    const m = await createMerchant();
    for (const id of LONE) {
      expectError(await m.api.post('/api/customers', { customer_id: id, ref: m.slug }), 400, reason('customer_id'));
      expectError(
        await m.api.post('/api/customers', { customer_id: uid('c'), cookie_id: id }),
        400,
        reason('cookie_id'),
      );
      expectError(
        await m.api.post('/api/customers', { customer_id: uid('c'), ref: m.slug, name: `Ann ${id}` }),
        400,
        reason('name'),
      );
    }
    expectError(
      await m.api.post('/api/customers', { customer_id: uid('c'), ref: m.slug, email: 'a\ud800@example.com' }),
      400,
      reason('email'),
    );
    expectError(await m.api.get(`/api/customers/${encodeURIComponent('sur\ufffd')}`), 404);
  });

  it('POST /api/clicks: ref, cookie_id, landing_url', async () => {
    const m = await createMerchant();
    for (const id of LONE) {
      expectError(await m.api.post('/api/clicks', { ref: id }), 400, reason('ref'));
      expectError(await m.api.post('/api/clicks', { ref: m.slug, cookie_id: id }), 400, reason('cookie_id'));
    }
    expectError(
      await m.api.post('/api/clicks', { ref: m.slug, landing_url: 'https://shop.example/\ud800' }),
      400,
      reason('landing_url'),
    );
  });

  it('POST /api/conversions/{id}/refund: refund_id; the two refund keys never merge', async () => {
    const m = await createMerchant();
    const sale = (await m.api.post('/api/conversions', { external_id: uid('o'), amount: 100, ref: m.slug })).body.data
      .conversion;
    for (const id of LONE)
      expectError(
        await m.api.post(`/api/conversions/${sale.id}/refund`, { amount: 10, refund_id: id }),
        400,
        reason('refund_id'),
      );
    expect((await m.api.get(`/api/conversions/${sale.id}`)).body.data.conversion.refunded_amount).toBe(0);
  });

  it('every other body: affiliates, coupons, programs, commissions, organizations; nested fields and keys are named by their path', async () => {
    const m = await createMerchant();
    expectError(
      await m.api.post('/api/affiliates', {
        email: `x${randomUUID()}@example.com`,
        program_id: m.program.id,
        name: 'Bo\ud800',
      }),
      400,
      reason('name'),
    );
    expectError(
      await m.api.post('/api/coupons', { code: 'SAVE\udbff', affiliate_id: m.affiliate.id }),
      400,
      reason('code'),
    );
    expectError(await m.api.post('/api/programs', { name: 'Main\ud800', commission_value: 10 }), 400, reason('name'));
    expectError(await m.api.patch(`/api/programs/${m.program.id}`, { name: '\udfffMain' }), 400, reason('name'));
    expectError(
      await m.api.post('/api/commissions', { affiliate_id: m.affiliate.id, amount: 5, description: 'bonus \ud800' }),
      400,
      reason('description'),
    );
    expectError(await admin().post('/admin/organizations', { name: 'Org \ud800' }), 400, reason('name'));
    // Nested values and object keys, wherever a schema would take them (or refuse them later).
    expectError(
      await m.api.post('/api/clicks', { ref: m.slug, extra: [{ a: 'x' }, { b: 'y\ud800' }] }),
      400,
      reason('extra.1.b'),
    );
    expectError(
      await m.api.post('/api/clicks', { ref: m.slug, extra: { 'k\ud800': 1 } }),
      400,
      /^extra: a key with ill-formed Unicode \(a lone UTF-16 surrogate\) is not allowed$/,
    );
  });

  it("the snippet's public endpoints: ref, cookieId, customerId", async () => {
    const m = await createMerchant();
    const publicPost = (path: string, body: unknown) =>
      request('POST', `/public/organizations/${m.id}/${path}`, { body });
    for (const id of LONE) {
      expectError(await publicPost('clicks', { ref: id }), 400, reason('ref'));
      expectError(await publicPost('clicks', { ref: m.slug, cookieId: id }), 400, reason('cookieId'));
      expectError(await publicPost('customers', { customerId: id, cookieId: m.slug }), 400, reason('customerId'));
    }
    expectError(await m.api.get(`/api/customers/${encodeURIComponent('sur\ufffd')}`), 404);
  });
});

describe('the partner portal API refuses them too', () => {
  it('an application whose name or slug holds a lone surrogate: 400 naming the field', async () => {
    const m = await createMerchant({ signup: 'open' });
    const { baseUrl } = await testServer();
    const path = `/partner/api/organizations/${m.id}/programs/${m.program.id}/applications`;
    const applyWith = (body: Record<string, unknown>) =>
      request('POST', path, {
        headers: { origin: baseUrl },
        body: {
          email: `p${randomUUID()}@partners.example`,
          slug: `p-${randomUUID().slice(0, 8)}`,
          accept_terms: true,
          ...body,
        },
      });
    expectError(await applyWith({ name: 'Pat\ud800' }), 400, reason('name'));
    expectError(await applyWith({ name: 'Pat', slug: 'pat\udbff' }), 400, reason('slug'));
  });
});
