import { beforeAll, describe, expect, it } from 'vitest';
import { createMerchant, request, type ApiResponse } from '../support/api.js';
import { testServer } from '../support/server.js';
import { contractRoutes, fillPath, pathParamNames } from '../reliability/support/contract-routes.js';
import { bodyVariants, idsForResource } from '../support/contract-walk.js';

type Merchant = Awaited<ReturnType<typeof createMerchant>>;

/**
 * Every /api route of the contract, walked from the contract object, called with a merchant's LIVE
 * key and the ids of the same merchant's TEST data: a test id is never found (404, never 403: test
 * data is not another organization's), never answered in a success, never changed. (People and API
 * keys are the account's in both modes by design: not walked.)
 */
const NOT_OF_A_MODE = new Set(['people']);
/** Routes that exist only in test mode and answer a live key 403 by design (spec/test-mode.md). */
const TEST_MODE_ONLY = new Set(['testData.delete', 'testData.getDeletion', 'testEmails.list']);

describe('a live key on every route, with the same merchant’s test ids', () => {
  let m: Merchant;
  const t: Record<string, string> = {};

  beforeAll(async () => {
    m = await createMerchant();
    const api = m.testApi;
    const program = (await api.post('/api/programs', { name: 'Test', commission_value: 30 })).body.data.program;
    const slug = `test-${Math.random().toString(36).slice(2, 10)}`;
    const affiliate = (
      await api.post('/api/affiliates', { email: `${slug}@example.com`, program_id: program.id, slug })
    ).body.data.affiliate;
    const click = (await api.post('/api/clicks', { ref: slug })).body.data.click;
    const customer = (await api.post('/api/customers', { customer_id: `cus-${slug}`, cookie_id: click.cookie_id })).body
      .data.customer;
    const conversion = (
      await api.post('/api/conversions', { external_id: `ord-${slug}`, amount: 100, customer_id: customer.customer_id })
    ).body.data.conversion;
    await api.post('/api/commissions', { affiliate_id: affiliate.id, amount: 10, description: 'bonus' });
    const payout = (await api.post('/api/payouts', {})).body.data.payouts[0];
    const commission = (
      await api.post('/api/commissions', { affiliate_id: affiliate.id, amount: 5, description: 'correction' })
    ).body.data.commission;
    const coupon = (await api.post('/api/coupons', { code: `T-${slug}`, affiliate_id: affiliate.id })).body.data.coupon;
    const endpoint = (
      await api.post('/api/webhook-endpoints', { url: 'http://127.0.0.1:9/test-hooks', events: ['conversion.created'] })
    ).body.data.webhook_endpoint;
    const imported = (
      await api.post('/api/imports', {
        source: 'csv',
        credentials: {
          affiliates_csv: `id,email,first_name,last_name,status,payout_email,tokens\nt1,imp-${slug}@example.com,T,M,active,,\n`,
        },
        program_id: program.id,
        dry_run: true,
      })
    ).body.data.import;
    // The import runs on its own: the snapshots below compare it once it has finished.
    for (
      let i = 0;
      i < 100 && (await api.get(`/api/imports/${imported.id}`)).body.data.import.status === 'running';
      i++
    )
      await new Promise((r) => setTimeout(r, 100));
    const { db } = await testServer();
    const [twin] = await db.orm.em
      .fork()
      .getConnection()
      .execute<{ id: string }[]>('select id from organizations where live_organization_id = ?', [m.id]);
    const [delivery] = await db.orm.em
      .fork()
      .getConnection()
      .execute<{ id: string }[]>(
        `with ev as (insert into outbound_events (id, organization_id, type, resource) values (gen_random_uuid(), ?, 'conversion.created', '{}'::jsonb) returning id)
       insert into webhook_deliveries (id, organization_id, endpoint_id, event_id) select gen_random_uuid(), ?, ?, id from ev returning id`,
        [twin.id, twin.id, endpoint.id],
      );
    Object.assign(t, {
      organization: twin.id,
      program: program.id,
      affiliate: affiliate.id,
      slug,
      email: affiliate.email,
      click: click.id,
      cookie: click.cookie_id,
      customer: customer.id,
      customer_id: customer.customer_id,
      conversion: conversion.id,
      external_id: conversion.external_id,
      commission: commission.id,
      payout: payout.id,
      coupon: coupon.id,
      code: coupon.code,
      endpoint: endpoint.id,
      delivery: delivery.id,
      import: imported.id,
    });
    for (const [k, v] of Object.entries(t)) expect(v, k).toEqual(expect.any(String));
  });

  function ids(resource: string, path: string): string[] {
    const found = idsForResource(resource, path, {
      program: t.program,
      affiliate: t.affiliate,
      customer: { id: t.customer, customer_id: t.customer_id },
      conversion: { id: t.conversion, external_id: t.external_id },
      commission: t.commission,
      payout: t.payout,
      coupon: t.coupon,
      import: t.import,
      webhookEndpoint: t.endpoint,
      webhookDelivery: t.delivery,
    });
    if (found) return found;
    throw new Error(`no test id known for ${resource} (${path}): add it to this test`);
  }

  async function testSnapshot(): Promise<string> {
    const { db } = await testServer();
    const tables = await db.orm.em
      .fork()
      .getConnection()
      .execute<{ table_name: string }[]>(
        `select table_name from information_schema.columns where column_name = 'organization_id' and table_schema = current_schema() order by table_name`,
      );
    const counts = await db.orm.em
      .fork()
      .getConnection()
      .execute(
        `select ${tables.map((x) => `(select count(*) from "${x.table_name}" where organization_id = ?) as "${x.table_name}"`).join(', ')}`,
        tables.map(() => t.organization),
      );
    const reads = await Promise.all(
      [
        `/api/programs/${t.program}`,
        `/api/affiliates/${t.affiliate}`,
        `/api/customers/${t.customer}`,
        `/api/conversions/${t.conversion}`,
        `/api/commissions/${t.commission}`,
        `/api/payouts/${t.payout}`,
        `/api/webhook-endpoints/${t.endpoint}`,
        `/api/imports/${t.import}`,
      ].map((p) => m.testApi.get(p)),
    );
    for (const r of reads) expect(r.status).toBe(200);
    return JSON.stringify([counts, reads.map((r) => r.body)]);
  }

  it(
    'finds nothing of the test data, answers 404 (never 403) for its ids, and changes none of it',
    { timeout: 120_000 },
    async () => {
      const routes = contractRoutes().filter(
        ({ name, route }) => route.path.startsWith('/api/') && !NOT_OF_A_MODE.has(name.split('.')[0]),
      );
      expect(routes.length).toBeGreaterThanOrEqual(40);
      const before = await testSnapshot();
      const testIds = Object.entries(t)
        .filter(([k]) => k !== 'organization')
        .map(([, v]) => v);
      let calls = 0;
      for (const { name, route } of routes) {
        const resource = name.split('.')[0];
        const params = pathParamNames(route.path);
        const pathVariants =
          params.length === 0
            ? [{}]
            : params.includes('id')
              ? ids(resource, route.path).map((id) => ({ id, provider: 'stripe' }))
              : [{ provider: 'stripe' }];
        // The body's references, set one at a time to the test data's identifiers.
        const references = {
          program_id: t.program,
          affiliate_id: t.affiliate,
          ref: t.slug,
          cookie_id: t.cookie,
          click_id: t.click,
          customer_id: t.customer_id,
          coupon: t.code,
        };
        const bodies = bodyVariants(route, references, { prefix: 'live' });
        for (const p of pathVariants) {
          for (const { body, reference } of bodies) {
            const path = fillPath(route.path, p);
            const res: ApiResponse = await request(route.method, path, { key: m.key, body });
            calls++;
            const what = `${name}: ${route.method} ${path} ${JSON.stringify(body) ?? ''} -> ${res.status} ${JSON.stringify(res.body)}`;
            expect(res.status, what).toBeLessThan(500);
            // The test-mode-only routes refuse a live key outright (403, their own message); every other route never answers 403 here.
            if (!TEST_MODE_ONLY.has(name)) expect(res.status, what).not.toBe(403);
            const carriesTestId = 'id' in p;
            const carriesReference = reference !== undefined;
            if (carriesTestId) expect([400, 404], what).toContain(res.status);
            else if (carriesReference) expect([400, 404, 409], what).toContain(res.status);
            if (res.status < 300) {
              const text = JSON.stringify(res.body);
              for (const id of testIds) expect(text.includes(id), `${what} shows ${id}`).toBe(false);
            }
          }
        }
      }
      expect(calls).toBeGreaterThan(50);
      expect(JSON.parse(await testSnapshot())).toEqual(JSON.parse(before));
    },
  );
});
