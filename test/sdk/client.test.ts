import { describe, expect, it } from 'vitest';
import {
  APIError,
  AffiliateAttributionError,
  AttributionNotFoundError,
  AttributionWindowExpiredError,
  AuthenticationError,
  ConflictError,
  NotFoundError,
  Page,
  PermissionDeniedError,
  ValidationError,
  getCookieId,
} from '../../client-sdk/src/index.js';
import { sdkClient, sdkMerchant, sdkOrganization, uniqueId } from './support.js';
import { rejection } from '../support/rejection.js';
import { testServer } from '../support/server.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('SDK against the live server: the README quick start', () => {
  it('runs as written', async () => {
    const { client: sdk, slug } = await sdkMerchant();
    const client = sdk;
    const req = new Request('https://shop.example.com/signup', { headers: { cookie: `svc_aff=${slug}` } });
    const customerId = uniqueId('cus');

    const { customer } = await client.customers.create({ customer_id: customerId, cookie_id: getCookieId(req) });
    const first = await client.conversions.create({
      external_id: uniqueId('in'),
      amount: 49.99,
      customer_id: customer.customer_id,
      kind: 'initial',
    });
    const { conversion, deduped } = await client.conversions.create({
      external_id: uniqueId('in'),
      amount: 49.99,
      customer_id: customerId,
    });
    await client.customers.update(customerId, { status: 'canceled' });

    expect(first.conversion.kind).toBe('initial');
    expect(conversion).toMatchObject({ kind: 'recurring', commission_amount: 15 });
    expect(deduped).toBe(false);
    expect((await client.customers.get(customerId)).customer.status).toBe('canceled');
  });
});

describe('SDK against the live server: me and authentication', () => {
  it('me() resolves to the organization of the key', async () => {
    const { client, id, name } = await sdkOrganization();
    await expect(client.me()).resolves.toEqual({ organization: { id, name, livemode: true, link_params: ['ref'] } });
  });

  it('a test key: me() says livemode false, its data is test data, deleteTestData() starts it over; a live key may not', async () => {
    const org = await sdkOrganization();
    const test = await sdkClient(org.testKey);
    await expect(test.me()).resolves.toEqual({
      organization: { id: org.id, name: org.name, livemode: false, link_params: ['ref'] },
    });
    const { program } = await test.programs.create({ name: 'Trial', commission_value: 10 });
    expect(program.livemode).toBe(false);
    await expect(org.client.programs.get(program.id)).rejects.toBeInstanceOf(NotFoundError);
    const refused = await rejection(org.client.deleteTestData());
    expect(refused).toBeInstanceOf(PermissionDeniedError);
    const { deleted } = await test.deleteTestData();
    expect(deleted.programs).toBe(1);
    await expect(test.programs.get(program.id)).rejects.toBeInstanceOf(NotFoundError);
  });

  it('withResponse() exposes status, headers and the request id the SDK sent', async () => {
    const { client } = await sdkOrganization();
    const sent = await client.me().withResponse();
    expect(sent.status).toBe(200);
    expect(sent.requestId).toMatch(UUID);
    expect(sent.headers.get('x-request-id')).toBe(sent.requestId);
    const chosen = await client.me({ requestId: 'checkout-42.retry:1' }).withResponse();
    expect(chosen.requestId).toBe('checkout-42.retry:1');
  });

  it('an invalid key throws AuthenticationError with status, message and request id', async () => {
    const client = await sdkClient('svc-thisisnotakeyatall000000000000000000000000');
    const err = await rejection(client.me());
    expect(err).toBeInstanceOf(AuthenticationError);
    expect(err).toBeInstanceOf(APIError);
    expect(err).toBeInstanceOf(AffiliateAttributionError);
    const e = err as AuthenticationError;
    expect(e.status).toBe(401);
    expect(e.message).toBe('Missing or invalid API key');
    expect(e.requestId).toMatch(UUID);
    expect(e.body).toEqual({ success: false, message: 'Missing or invalid API key' });
    expect(e.name).toBe('AuthenticationError');
  });
});

describe('SDK against the live server: programs', () => {
  it('create, get, update', async () => {
    const { client } = await sdkOrganization();
    const { program } = await client.programs.create({ name: 'Partners', commission_value: 25, click_window_days: 30 });
    expect(program).toMatchObject({
      name: 'Partners',
      commission_type: 'percent',
      commission_value: 25,
      click_window_days: 30,
      currency: 'USD',
    });
    expect(program.id).toMatch(UUID);
    expect(await client.programs.get(program.id)).toEqual({ program });
    const updated = await client.programs.update(program.id, { commission_window_months: 12 });
    expect(updated.program.commission_window_months).toBe(12);
    expect(updated.program.name).toBe('Partners');
  });

  it('list: a page, the next page, and every item with for await', async () => {
    const { client } = await sdkOrganization();
    const ids: string[] = [];
    for (const name of ['A', 'B', 'C'])
      ids.push((await client.programs.create({ name, commission_value: 10 })).program.id);

    const first = await client.programs.list({ limit: 2 });
    expect(first).toBeInstanceOf(Page);
    expect(first.data.map((p) => p.id)).toEqual(ids.slice(0, 2));
    expect(first.hasNextPage()).toBe(true);
    const second = await first.getNextPage();
    expect(second.data.map((p) => p.id)).toEqual(ids.slice(2));
    expect(second.hasNextPage()).toBe(false);
    await expect(second.getNextPage()).rejects.toThrow(/No next page/);

    const all: string[] = [];
    for await (const program of client.programs.list({ limit: 1 })) all.push(program.id);
    expect(all).toEqual(ids);

    const pages: number[] = [];
    for await (const page of (await client.programs.list({ limit: 2 })).iterPages()) pages.push(page.data.length);
    expect(pages).toEqual([2, 1]);
  });

  it('a program of another organization: PermissionDeniedError; none at all: NotFoundError', async () => {
    const mine = await sdkOrganization();
    const theirs = await sdkOrganization();
    const { program } = await theirs.client.programs.create({ name: 'Theirs', commission_value: 5 });
    const denied = await rejection(mine.client.programs.get(program.id));
    expect(denied).toBeInstanceOf(PermissionDeniedError);
    expect((denied as PermissionDeniedError).status).toBe(403);
    const missing = await rejection(mine.client.programs.get('00000000-0000-4000-8000-000000000000'));
    expect(missing).toBeInstanceOf(NotFoundError);
    expect(missing).not.toBeInstanceOf(AttributionNotFoundError);
  });

  it('a malformed field throws ValidationError naming it', async () => {
    const { client } = await sdkOrganization();
    // The SDK leaves validation to the service: what the types forbid, the service refuses too.
    const err = await rejection(client.programs.create({ name: 'X', commission_value: 'ten' as unknown as number }));
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as ValidationError).status).toBe(400);
    expect((err as ValidationError).message).toMatch(/commission_value/);
  });
});

describe('SDK against the live server: affiliates and clicks', () => {
  it('create is idempotent per (email, program) and surfaces deduped', async () => {
    const { client, program } = await sdkMerchant();
    const email = `${uniqueId('p')}@example.com`;
    const created = await client.affiliates.create({ email, program_id: program.id, name: 'Pat' }).withResponse();
    expect(created.status).toBe(201);
    expect(created.data.deduped).toBe(false);
    expect(created.data.affiliate).toMatchObject({ email, program_id: program.id, name: 'Pat' });
    const again = await client.affiliates.create({ email, program_id: program.id, slug: 'ignored-on-repeat' });
    expect(again).toEqual({ affiliate: created.data.affiliate, deduped: true });
    expect(await client.affiliates.get(created.data.affiliate.id)).toEqual({
      affiliate: created.data.affiliate,
      aliases: [],
    });
  });

  it('list filters by program, paginates, and a taken slug is a ConflictError', async () => {
    const { client, program, affiliate, slug } = await sdkMerchant();
    const { program: other } = await client.programs.create({ name: 'Other', commission_value: 5 });
    const extra = await client.affiliates.create({ email: `${uniqueId('q')}@example.com`, program_id: other.id });
    const inMain: string[] = [];
    for await (const a of client.affiliates.list({ program_id: program.id, limit: 1 })) inMain.push(a.id);
    expect(inMain).toEqual([affiliate.id]);
    const all = await client.affiliates.list();
    expect(all.data.map((a) => a.id).sort()).toEqual([affiliate.id, extra.affiliate.id].sort());

    const err = await rejection(
      client.affiliates.create({ email: `${uniqueId('r')}@example.com`, program_id: other.id, slug }),
    );
    expect(err).toBeInstanceOf(ConflictError);
    expect((err as ConflictError).status).toBe(409);
  });

  it('clicks.create returns the cookie id and click id; an unknown ref is AttributionNotFoundError', async () => {
    const { client, slug, affiliate } = await sdkMerchant();
    const { click } = await client.clicks.create({ ref: slug, landing_url: 'https://shop.example.com/?ref=' + slug });
    expect(click.id).toMatch(UUID);
    expect(click.cookie_id).toMatch(/^ck_/);
    expect(click.affiliate_id).toBe(affiliate.id);

    const err = await rejection(client.clicks.create({ ref: 'no-such-slug-anywhere' }));
    expect(err).toBeInstanceOf(AttributionNotFoundError);
    expect(err).toBeInstanceOf(NotFoundError);
    expect((err as AttributionNotFoundError).status).toBe(404);
    expect((err as AttributionNotFoundError).message).toBe('No attribution found');
  });
});

describe('SDK against the live server: customers', () => {
  it('create (by cookie id), repeat (deduped), get by either id, update status', async () => {
    const { client, slug, affiliate, program } = await sdkMerchant();
    const { click } = await client.clicks.create({ ref: slug });
    // A merchant's id with characters that need encoding in a path.
    const customerId = `${uniqueId('cus')}/eu ?#`;
    const created = await client.customers
      .create({ customer_id: customerId, cookie_id: click.cookie_id, email: 'a@example.com' })
      .withResponse();
    expect(created.status).toBe(201);
    expect(created.data.deduped).toBe(false);
    expect(created.data.customer).toMatchObject({
      customer_id: customerId,
      status: 'trial',
      affiliate_id: affiliate.id,
      program_id: program.id,
      click_id: click.id,
    });

    const repeat = await client.customers.create({ customer_id: customerId, cookie_id: click.cookie_id });
    expect(repeat.deduped).toBe(true);
    expect(repeat.customer.id).toBe(created.data.customer.id);

    expect((await client.customers.get(customerId)).customer.id).toBe(created.data.customer.id);
    expect((await client.customers.get(created.data.customer.id)).customer.customer_id).toBe(customerId);

    const { customer } = await client.customers.update(customerId, { status: 'canceled' });
    expect(customer.status).toBe('canceled');
    expect((await client.customers.get(customerId)).customer.status).toBe('canceled');
  });

  it('unknown referral: AttributionNotFoundError; unknown customer: NotFoundError; another organization: PermissionDeniedError', async () => {
    const { client, slug } = await sdkMerchant();
    const noAttribution = await rejection(
      client.customers.create({ customer_id: uniqueId('cus'), cookie_id: 'ck_neverissued' }),
    );
    expect(noAttribution).toBeInstanceOf(AttributionNotFoundError);

    const missing = await rejection(client.customers.get(uniqueId('nobody')));
    expect(missing).toBeInstanceOf(NotFoundError);
    expect(missing).not.toBeInstanceOf(AttributionNotFoundError);

    const customerId = uniqueId('cus');
    await client.customers.create({ customer_id: customerId, ref: slug });
    const other = await sdkOrganization();
    const denied = await rejection(other.client.customers.update(customerId, { status: 'active' }));
    expect(denied).toBeInstanceOf(PermissionDeniedError);
  });

  it('an empty path id is refused before any request', async () => {
    const { client } = await sdkOrganization();
    await expect(client.customers.get('')).rejects.toThrow(TypeError);
  });
});

describe('SDK against the live server: conversions', () => {
  it('initial by cookie id, recurring by customer id, deduped on external_id, get by external_id', async () => {
    const { client, slug } = await sdkMerchant();
    const { click } = await client.clicks.create({ ref: slug });
    const customerId = uniqueId('cus');
    await client.customers.create({ customer_id: customerId, cookie_id: click.cookie_id });

    const first = await client.conversions
      .create({ external_id: uniqueId('in'), amount: 100, customer_id: customerId, cookie_id: click.cookie_id })
      .withResponse();
    expect(first.status).toBe(201);
    expect(first.data).toMatchObject({
      deduped: false,
      conversion: { kind: 'initial', amount: 100, commission_amount: 30, customer_id: customerId },
    });

    const externalId = uniqueId('in');
    const renewal = await client.conversions.create({
      external_id: externalId,
      amount: 49.99,
      customer_id: customerId,
    });
    expect(renewal).toMatchObject({ deduped: false, conversion: { kind: 'recurring', commission_amount: 15 } });
    const again = await client.conversions.create({ external_id: externalId, amount: 49.99, customer_id: customerId });
    expect(again).toEqual({ conversion: renewal.conversion, deduped: true });

    expect(await client.conversions.get(externalId)).toEqual({ conversion: renewal.conversion });
    expect(await client.conversions.get(renewal.conversion.id)).toEqual({ conversion: renewal.conversion });
  });

  it('list filters by customer and iterates over every page', async () => {
    const { client, slug } = await sdkMerchant();
    const customerId = uniqueId('cus');
    await client.customers.create({ customer_id: customerId, ref: slug });
    const created: string[] = [];
    for (let i = 0; i < 5; i++) {
      const { conversion } = await client.conversions.create({
        external_id: uniqueId(`inv${i}`),
        amount: 10 + i,
        customer_id: customerId,
        occurred_at: new Date(Date.UTC(2026, 0, 1 + i)).toISOString(),
      });
      created.push(conversion.id);
    }
    await client.conversions.create({ external_id: uniqueId('other'), amount: 5, ref: slug });

    const seen: string[] = [];
    for await (const conversion of client.conversions.list({ customer_id: customerId, limit: 2 })) {
      expect(conversion.customer_id).toBe(customerId);
      seen.push(conversion.id);
    }
    expect(seen).toEqual([...created].reverse()); // newest occurred_at first

    const window = await client.conversions.list({
      customer_id: customerId,
      from: '2026-01-02T00:00:00Z',
      to: '2026-01-04T00:00:00Z',
    });
    expect(window.data).toHaveLength(2);
    expect(window.nextCursor).toBeNull();
  });

  it('refund: full refund reverses the commission; a repeat is deduped', async () => {
    const { client, slug } = await sdkMerchant();
    const externalId = uniqueId('ord');
    await client.conversions.create({ external_id: externalId, amount: 80, ref: slug });
    const refunded = await client.conversions.refund(externalId);
    expect(refunded.deduped).toBe(false);
    expect(refunded.conversion).toMatchObject({ status: 'reversed', commission_amount: 0, refunded_amount: 80 });
    const again = await client.conversions.refund(externalId);
    expect(again.deduped).toBe(true);
    expect(again.conversion.status).toBe('reversed');
  });

  it('a click older than the click window: AttributionWindowExpiredError (410)', async () => {
    const { client, slug } = await sdkMerchant({ click_window_days: 1 });
    const { click } = await client.clicks.create({
      ref: slug,
      occurred_at: new Date(Date.now() - 3 * 86_400_000).toISOString(),
    });
    const err = await rejection(
      client.conversions.create({ external_id: uniqueId('late'), amount: 10, click_id: click.id }),
    );
    expect(err).toBeInstanceOf(AttributionWindowExpiredError);
    expect((err as AttributionWindowExpiredError).status).toBe(410);
    expect((err as AttributionWindowExpiredError).requestId).toMatch(UUID);
  });

  it('a recurring charge of a never-tracked customer: AttributionNotFoundError; a negative amount: ValidationError', async () => {
    const { client } = await sdkMerchant();
    await expect(
      client.conversions.create({ external_id: uniqueId('x'), amount: 10, customer_id: uniqueId('ghost') }),
    ).rejects.toBeInstanceOf(AttributionNotFoundError);
    const invalid = await rejection(
      client.conversions.create({ external_id: uniqueId('x'), amount: -1, customer_id: 'c' }),
    );
    expect(invalid).toBeInstanceOf(ValidationError);
    expect((invalid as ValidationError).message).toMatch(/amount/);
  });
});

describe('SDK against the live server: integrations', () => {
  it('set, list and delete a provider signing secret (never returned)', async () => {
    const { client, id } = await sdkOrganization();
    const { integration } = await client.integrations.set('stripe', { signing_secret: 'whsec_' + 'a'.repeat(32) });
    expect(integration).toMatchObject({ provider: 'stripe', configured: true, webhook_path: `/webhooks/stripe/${id}` });
    expect(JSON.stringify(integration)).not.toContain('whsec_');

    const { integrations } = await client.integrations.list();
    expect(integrations.map((i) => i.provider).sort()).toEqual([
      'chargebee',
      'lemonsqueezy',
      'paddle',
      'paypal_payouts',
      'polar',
      'stripe',
      'stripe_connect',
      'wise',
    ]);
    expect(integrations.find((i) => i.provider === 'stripe')?.configured).toBe(true);
    expect(integrations.find((i) => i.provider === 'paddle')?.configured).toBe(false);

    const removed = await client.integrations.delete('stripe');
    expect(removed.integration.configured).toBe(false);
  });

  it('events(): the webhooks received, a rejected one with its reason, filtered by outcome', async () => {
    const { client, id } = await sdkOrganization();
    await client.integrations.set('stripe', { signing_secret: 'whsec_' + 'b'.repeat(32) });
    const { baseUrl } = await testServer();
    const refused = await fetch(`${baseUrl}/webhooks/stripe/${id}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"id":"evt_1"}',
    });
    expect(refused.status).toBe(400);
    const page = await client.integrations.events({ outcome: 'rejected' });
    expect(page.data).toEqual([
      expect.objectContaining({
        provider: 'stripe',
        outcome: 'rejected',
        event_id: null,
        requests: 1,
        detail: 'Missing Stripe-Signature header',
      }),
    ]);
    expect(page.hasNextPage()).toBe(false);
    expect((await client.integrations.events({ outcome: 'processed' })).data).toEqual([]);
  });

  it('a too short secret is a ValidationError', async () => {
    const { client } = await sdkOrganization();
    await expect(client.integrations.set('paddle', { signing_secret: 'short' })).rejects.toBeInstanceOf(
      ValidationError,
    );
  });
});
