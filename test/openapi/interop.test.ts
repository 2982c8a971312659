import createClient from 'openapi-fetch';
import { beforeAll, describe, expect, it } from 'vitest';
import type { paths } from './generated/openapi.js';
import { createOrganization } from '../support/api.js';
import { validatingFetch } from '../support/openapi-validation.js';
import { testServer } from '../support/server.js';

/**
 * A third party's view: a client generated from openapi/openapi.json by openapi-typescript (the
 * committed test/openapi/generated/openapi.d.ts, which document.test.ts holds equal to a fresh
 * generation) driven by openapi-fetch, running the whole merchant flow against a live server.
 * Nothing from the contract or the SDK is imported. Every response is validated against the
 * document as well.
 */
describe('third-party client generated from the OpenAPI document (openapi-typescript + openapi-fetch)', () => {
  let client: ReturnType<typeof createClient<paths>>;
  let baseUrl: string;

  beforeAll(async () => {
    ({ baseUrl } = await testServer());
    const org = await createOrganization('Interop Inc');
    client = createClient<paths>({ baseUrl, fetch: validatingFetch, headers: { Authorization: `Bearer ${org.key}` } });
  });

  it('runs the merchant flow: program, affiliate, click, customer, conversion, recurring, dedupe, errors', async () => {
    const me = await client.GET('/api/me');
    expect(me.response.status).toBe(200);
    expect(me.data?.data.organization.name).toBe('Interop Inc');

    const program = await client.POST('/api/programs', {
      body: { name: 'Partners', commission_value: 30, commission_type: 'percent' },
    });
    expect(program.response.status).toBe(201);
    const programId = program.data!.data.program.id;

    const slug = `interop-${Date.now().toString(36)}`;
    const affiliate = await client.POST('/api/affiliates', {
      body: { email: `${slug}@partners.example`, program_id: programId, slug },
    });
    expect(affiliate.response.status).toBe(201);
    expect(affiliate.data?.data.affiliate.slug).toBe(slug);

    const click = await client.POST('/api/clicks', {
      body: { ref: slug, landing_url: `https://shop.example/?ref=${slug}` },
    });
    expect(click.response.status).toBe(201);
    const cookieId = click.data!.data.click.cookie_id;
    expect(cookieId).toMatch(/^ck_/);

    const customer = await client.POST('/api/customers', {
      body: { customer_id: 'cus_interop_1', cookie_id: cookieId },
    });
    expect(customer.response.status).toBe(201);
    expect(customer.data).toMatchObject({
      deduped: false,
      data: {
        customer: { customer_id: 'cus_interop_1', status: 'trial', affiliate_id: affiliate.data!.data.affiliate.id },
      },
    });

    const initial = await client.POST('/api/conversions', {
      body: { external_id: 'in_interop_1', amount: 49.99, customer_id: 'cus_interop_1', cookie_id: cookieId },
    });
    expect(initial.response.status).toBe(201);
    expect(initial.data?.data.conversion).toMatchObject({ kind: 'initial', amount: 49.99, commission_amount: 15 });

    const recurring = await client.POST('/api/conversions', {
      body: { external_id: 'in_interop_2', amount: 49.99, customer_id: 'cus_interop_1' },
    });
    expect(recurring.response.status).toBe(201);
    expect(recurring.data?.data.conversion).toMatchObject({ kind: 'recurring', program_id: programId });

    const repeat = await client.POST('/api/conversions', {
      body: { external_id: 'in_interop_2', amount: 49.99, customer_id: 'cus_interop_1' },
    });
    expect(repeat.response.status).toBe(200);
    expect(repeat.data?.deduped).toBe(true);
    expect(repeat.data?.data.conversion.id).toBe(recurring.data?.data.conversion.id);

    const fetched = await client.GET('/api/customers/{id}', { params: { path: { id: 'cus_interop_1' } } });
    expect(fetched.data?.data.customer.status).toBe('active');

    const list = await client.GET('/api/conversions', {
      params: { query: { customer_id: 'cus_interop_1', limit: 10 } },
    });
    expect(list.data?.data.conversions.map((c) => c.external_id).sort()).toEqual(['in_interop_1', 'in_interop_2']);

    const cancel = await client.PATCH('/api/customers/{id}', {
      params: { path: { id: 'cus_interop_1' } },
      body: { status: 'canceled' },
    });
    expect(cancel.data?.data.customer.status).toBe('canceled');

    // Errors arrive typed as the document's ErrorBody.
    const noAttribution = await client.POST('/api/conversions', {
      body: { external_id: 'in_interop_3', amount: 10, cookie_id: 'ck_neverissued0000000000' },
    });
    expect(noAttribution.response.status).toBe(404);
    expect(noAttribution.error).toEqual({ success: false, message: 'No attribution found' });

    const invalid = await client.POST('/api/conversions', {
      body: { amount: 10, customer_id: 'cus_interop_1' } as never,
    });
    expect(invalid.response.status).toBe(400);
    expect(invalid.error?.message).toMatch(/external_id/);

    const anonymous = createClient<paths>({ baseUrl, fetch: validatingFetch });
    const unauthorized = await anonymous.GET('/api/me');
    expect(unauthorized.response.status).toBe(401);
    expect(unauthorized.error).toEqual({ success: false, message: 'Missing or invalid API key' });
  });
});
