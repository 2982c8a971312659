import type { ZodTypeAny } from 'zod';
import { beforeAll, describe, expect, it } from 'vitest';
import { createMerchant, request, type ApiResponse } from '../support/api.js';
import { testServer } from '../support/server.js';
import { contractRoutes, fillPath, pathParamNames, type ContractRoute } from './support/contract-routes.js';
import { isEnvelope } from './support/service.js';
import { bodyVariants as bodiesFor, def, idsForResource } from '../support/contract-walk.js';

type Merchant = Awaited<ReturnType<typeof createMerchant>>;

interface Victim extends Merchant {
  click: { id: string; cookie_id: string };
  coupon: { id: string; code: string };
  customer: { id: string; customer_id: string };
  conversion: { id: string; external_id: string };
  commission: { id: string };
  payout: { id: string };
  webhookEndpoint: { id: string };
  webhookDelivery: { id: string };
  import: { id: string };
}

/** The body's references, set one at a time to the victim's identifiers. */
const BODY_REFERENCES = [
  'program_id',
  'affiliate_id',
  'ref',
  'cookie_id',
  'click_id',
  'customer_id',
  'cookieId',
  'customerId',
  'coupon',
] as const;

/**
 * Every route of the contract, walked from the contract object, called with another
 * organization's key and this organization's ids: never a success that carries or changes the
 * victim's data.
 */
describe('cross-organization access on every route', () => {
  let victim: Victim;
  let intruder: Merchant;
  let victimIds: string[];

  beforeAll(async () => {
    const a = await createMerchant();
    const click = await a.api.post('/api/clicks', { ref: a.slug });
    const customer = await a.api.post('/api/customers', {
      customer_id: `victim-cus-${Date.now()}`,
      cookie_id: click.body.data.click.cookie_id,
    });
    const conversion = await a.api.post('/api/conversions', {
      external_id: `victim-order-${Date.now()}`,
      amount: 100,
      customer_id: customer.body.data.customer.customer_id,
    });
    const integration = await a.api.put('/api/integrations/stripe', {
      signing_secret: 'whsec_victim_secret_0123456789',
    });
    // A payout (it takes the first adjustment), and an entry no payout carries.
    const paid = await a.api.post('/api/commissions', {
      affiliate_id: a.affiliate.id,
      amount: 10,
      description: 'victim bonus',
    });
    const payout = await a.api.post('/api/payouts', {});
    const commission = await a.api.post('/api/commissions', {
      affiliate_id: a.affiliate.id,
      amount: 5,
      description: 'victim correction',
    });
    // A dry-run import (CSV: no source to reach) gives the victim an import id to probe.
    const imported = await a.api.post('/api/imports', {
      source: 'csv',
      credentials: {
        affiliates_csv:
          'id,email,first_name,last_name,status,payout_email,tokens\nv1,victim-import@example.com,Vic,Tim,active,,\n',
      },
      program_id: a.program.id,
      dry_run: true,
    });
    expect(imported.status).toBe(202);
    const endpoint = await a.api.post('/api/webhook-endpoints', {
      url: 'http://127.0.0.1:9/victim-hooks',
      events: ['conversion.created'],
    });
    const coupon = await a.api.post('/api/coupons', { code: `VICTIM-${Date.now()}`, affiliate_id: a.affiliate.id });
    expect([
      click.status,
      customer.status,
      conversion.status,
      integration.status,
      paid.status,
      payout.status,
      commission.status,
      endpoint.status,
      coupon.status,
    ]).toEqual([201, 201, 201, 200, 201, 201, 201, 201, 201]);
    // A delivery in the victim's log (no delivery worker runs on this server: written as the relay would).
    const { db } = await testServer();
    const [delivery] = await db.orm.em
      .fork()
      .getConnection()
      .execute(
        `with ev as (insert into outbound_events (id, organization_id, type, resource) values (gen_random_uuid(), ?, 'conversion.created', '{}'::jsonb) returning id)
       insert into webhook_deliveries (id, organization_id, endpoint_id, event_id) select gen_random_uuid(), ?, ?, id from ev returning id`,
        [a.id, a.id, endpoint.body.data.webhook_endpoint.id],
      );
    victim = {
      ...a,
      click: click.body.data.click,
      coupon: coupon.body.data.coupon,
      customer: customer.body.data.customer,
      conversion: conversion.body.data.conversion,
      commission: commission.body.data.commission,
      payout: payout.body.data.payouts[0],
      webhookEndpoint: endpoint.body.data.webhook_endpoint,
      webhookDelivery: delivery as { id: string },
      import: imported.body.data.import as { id: string },
    };
    intruder = await createMerchant();
    // The intruder has data of its own, so that its lists are not trivially empty.
    await intruder.api.post('/api/conversions', {
      external_id: `intruder-order-${Date.now()}`,
      amount: 5,
      ref: intruder.slug,
    });
    victimIds = [
      victim.id,
      victim.keyId,
      victim.program.id,
      victim.affiliate.id,
      victim.slug,
      victim.click.id,
      victim.click.cookie_id,
      victim.customer.id,
      victim.customer.customer_id,
      victim.conversion.id,
      victim.conversion.external_id,
      victim.commission.id,
      victim.payout.id,
      victim.webhookEndpoint.id,
      victim.webhookDelivery.id,
      victim.affiliate.email,
      victim.coupon.id,
      victim.coupon.code,
      victim.import.id,
    ];
  });

  /** Values for the path parameters of a route, per resource: every victim id that path accepts. */
  function pathVariants(name: string, path: string): Record<string, string>[] {
    const resource = name.split('.')[0];
    const params = pathParamNames(path);
    if (params.length === 0) return [{}];
    const byParam = (param: string): string[] => {
      // The public routes (the snippet's, the partner portal's join page and sign-in) take the
      // organization in the path and no key: the intruder calls them for its own organization.
      const isPublic = resource === 'tracking' || resource === 'partnerPublic';
      if (param === 'organizationId') return isPublic ? [intruder.id] : [victim.id];
      if (param === 'programId' && isPublic) return [intruder.program.id];
      if (param === 'slug') return ['any-slug'];
      if (param === 'provider') return ['stripe'];
      // /api/exports/:kind: what an export covers, not whose; the key decides whose rows it reads.
      if (param === 'kind') return ['affiliates', 'commissions', 'conversions'];
      if (param === 'keyId') return [victim.keyId];
      if (param === 'id') {
        const shared = idsForResource(resource, path, {
          program: victim.program.id,
          affiliate: victim.affiliate.id,
          customer: victim.customer,
          conversion: victim.conversion,
          commission: victim.commission.id,
          payout: victim.payout.id,
          coupon: victim.coupon.id,
          import: victim.import.id,
          webhookEndpoint: victim.webhookEndpoint.id,
          webhookDelivery: victim.webhookDelivery.id,
        });
        if (shared) return shared;
        switch (resource) {
          case 'admin':
          case 'adminPeople':
            return [victim.id];
          case 'people':
            // /api/api-keys/:id, /api/users/:id, /api/invitations/:id: the victim's API key id
            // (its users and invitations are ids of the same kind, refused the same way).
            return [victim.keyId];
        }
      }
      throw new Error(`route ${name} (${path}): no victim id known for :${param}; add it to this test`);
    };
    let variants: Record<string, string>[] = [{}];
    for (const param of params)
      variants = variants.flatMap((v) => byParam(param).map((value) => ({ ...v, [param]: value })));
    return variants;
  }

  function bodyVariants(route: ContractRoute['route']): unknown[] {
    const references: Record<(typeof BODY_REFERENCES)[number], string> = {
      program_id: victim.program.id,
      affiliate_id: victim.affiliate.id,
      ref: victim.slug,
      cookie_id: victim.click.cookie_id,
      click_id: victim.click.id,
      customer_id: victim.customer.customer_id,
      cookieId: victim.click.cookie_id,
      customerId: victim.customer.customer_id,
      coupon: victim.coupon.code,
    };
    return bodiesFor(route, references, {
      prefix: 'intruder',
      fallback: { ref_svc_affiliate: victim.click.cookie_id },
    }).map((v) => v.body);
  }

  function queryVariants(route: ContractRoute['route']): string[] {
    if (route.method !== 'GET' || !route.query) return [''];
    const shape = def(route.query as ZodTypeAny).shape() as Record<string, unknown>;
    const filters: Record<string, string> = {
      program_id: victim.program.id,
      affiliate_id: victim.affiliate.id,
      customer_id: victim.customer.customer_id,
      email: victim.affiliate.email,
    };
    return [
      '',
      ...Object.keys(filters)
        .filter((k) => k in shape)
        .map((k) => `?${k}=${encodeURIComponent(filters[k])}`),
    ];
  }

  async function victimSnapshot(): Promise<string> {
    const { db } = await testServer();
    const tables: { table_name: string }[] = await db.orm.em.fork().getConnection().execute(
      // webhook_rejections counts the requests to the victim's public webhook URLs refused before
      // verification (anyone may post there; the merchant sees them on the Integrations page): by
      // design it changes, by a reason and a count, never a body. Every other table stays as it was.
      `select table_name from information_schema.columns where column_name = 'organization_id' and table_schema = current_schema() and table_name <> 'webhook_rejections' order by table_name`,
    );
    const counts = await db.orm.em
      .fork()
      .getConnection()
      .execute(
        `select ${tables.map((t) => `(select count(*) from "${t.table_name}" where organization_id = ?) as "${t.table_name}"`).join(', ')}`,
        tables.map(() => victim.id),
      );
    const reads = await Promise.all([
      victim.api.get(`/api/programs/${victim.program.id}`),
      victim.api.get(`/api/affiliates/${victim.affiliate.id}`),
      victim.api.get(`/api/customers/${victim.customer.id}`),
      victim.api.get(`/api/conversions/${victim.conversion.id}`),
      victim.api.get(`/api/commissions/${victim.commission.id}`),
      victim.api.get(`/api/payouts/${victim.payout.id}`),
      victim.api.get(`/api/webhook-endpoints/${victim.webhookEndpoint.id}`),
      victim.api.get(`/api/webhook-endpoints/${victim.webhookEndpoint.id}/deliveries`),
      victim.api.get('/api/integrations'),
      victim.api.get('/api/me'),
    ]);
    for (const r of reads) expect(r.status).toBe(200);
    return JSON.stringify([counts, reads.map((r) => r.body)]);
  }

  it('refuses the intruder everywhere and leaves the victim untouched', { timeout: 120_000 }, async () => {
    const routes = contractRoutes();
    expect(routes.length).toBeGreaterThanOrEqual(20);
    const before = await victimSnapshot();
    const outcomes: string[] = [];
    let calls = 0;

    for (const { name, route } of routes) {
      for (const params of pathVariants(name, route.path)) {
        for (const body of bodyVariants(route)) {
          for (const query of queryVariants(route)) {
            const path = fillPath(route.path, params) + query;
            const carriesVictimId = Object.values(params).some((v) => victimIds.includes(v));
            // A browser's user agent: the public endpoints answer bots without looking anything up.
            const headers = {
              'user-agent':
                'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36',
            };
            const res: ApiResponse = await request(route.method, path, { key: intruder.key, body, headers });
            calls++;
            const what = `${name}: ${route.method} ${path} ${JSON.stringify(body) ?? ''} -> ${res.status} ${JSON.stringify(res.body)}`;
            outcomes.push(`${res.status} ${name}`);

            expect(res.status, what).toBeLessThan(500);
            if (res.status >= 400) expect(isEnvelope(res.body), what).toBe(true);
            if (carriesVictimId) {
              // The victim's id in the path: refused (404/403; 401 on operator routes; 400 for an unsigned webhook).
              expect([400, 401, 403, 404], what).toContain(res.status);
            } else if (
              body !== undefined &&
              BODY_REFERENCES.some((k) => (body as Record<string, unknown>)[k] !== undefined)
            ) {
              // A reference to the victim's program, click, slug or customer: not resolvable by the intruder.
              expect([400, 401, 404], what).toContain(res.status);
            }
            if (res.status < 300) {
              const text = JSON.stringify(res.body);
              for (const id of victimIds) expect(text.includes(id), `${what} leaks ${id}`).toBe(false);
            }
          }
        }
      }
    }
    expect(await victimSnapshot()).toBe(before);
    // What the intruder's posts to the victim's webhook URLs left: reasons of ours, nothing of theirs.
    const log = await victim.api.get('/api/integrations/events?outcome=rejected');
    for (const entry of log.body.data.webhook_events)
      expect(entry, JSON.stringify(entry)).toMatchObject({ outcome: 'rejected', event_id: null, event_type: null });
    console.info(
      `[cross-org] ${routes.length} routes, ${calls} calls with another organization's key and ids; outcomes ${JSON.stringify(count(outcomes))}`,
    );
  });

  it('the same ids work for their own organization (the refusals above are not about bad ids)', async () => {
    for (const path of [
      `/api/programs/${victim.program.id}`,
      `/api/affiliates/${victim.affiliate.id}`,
      `/api/customers/${victim.customer.id}`,
      `/api/customers/${victim.customer.customer_id}`,
      `/api/conversions/${victim.conversion.id}`,
      `/api/conversions/${victim.conversion.external_id}`,
    ]) {
      expect((await victim.api.get(path)).status, path).toBe(200);
    }
  });
});

function count(values: string[]): Record<string, number> {
  const statuses: Record<string, number> = {};
  for (const v of values) {
    const status = v.split(' ')[0];
    statuses[status] = (statuses[status] ?? 0) + 1;
  }
  return statuses;
}
