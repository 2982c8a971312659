import { describe, expect, it } from 'vitest';
import { createMerchant, createOrganization, expectError } from '../support/api.js';

describe('affiliates', () => {
  it('creates a membership (201, deduped false) with the documented shape', async () => {
    const org = await createOrganization();
    const program = (await org.api.post('/api/programs', { name: 'P', commission_value: 10 })).body.data.program;
    const res = await org.api.post('/api/affiliates', {
      email: 'ann@example.com',
      program_id: program.id,
      slug: 'ann',
      name: 'Ann',
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      success: true,
      deduped: false,
      data: {
        // status and payout_email: the ledger's fields (issue 14).
        affiliate: {
          id: expect.any(String),
          email: 'ann@example.com',
          name: 'Ann',
          program_id: program.id,
          slug: 'ann',
          status: 'active',
          payout_email: null,
          commission_value: null,
          // Payout rails (issue 40): paid by the export files until told otherwise, no tax form yet.
          payout_method: 'manual',
          stripe_account_id: null,
          tax_form: { status: 'missing', kind: null, submitted_at: null, decided_at: null, rejection_reason: null },
          created_at: expect.any(String),
          livemode: true,
        },
      },
    });
  });

  it('is idempotent per (email, program): 200, deduped, unchanged even with another slug', async () => {
    const m = await createMerchant();
    const again = await m.api.post('/api/affiliates', {
      email: m.affiliate.email.toUpperCase(),
      program_id: m.program.id,
      slug: 'something-else',
    });
    expect(again.status).toBe(200);
    expect(again.body.deduped).toBe(true);
    expect(again.body.data.affiliate).toEqual(m.affiliate);
  });

  it('takes payout_method and stripe_account_id on create (as PATCH does); a bad value is a 400 naming the field, nothing created', async () => {
    const org = await createOrganization();
    const program = (await org.api.post('/api/programs', { name: 'P', commission_value: 10 })).body.data.program;
    const paypal = await org.api.post('/api/affiliates', {
      email: 'pay@example.com',
      program_id: program.id,
      payout_method: 'paypal',
      payout_email: 'pay.pal@example.com',
    });
    expect(paypal.status, JSON.stringify(paypal.body)).toBe(201);
    expect(paypal.body.data.affiliate).toMatchObject({
      payout_method: 'paypal',
      payout_email: 'pay.pal@example.com',
      stripe_account_id: null,
    });
    const stripe = await org.api.post('/api/affiliates', {
      email: 'str@example.com',
      program_id: program.id,
      payout_method: 'stripe',
      stripe_account_id: 'acct_1Abc',
    });
    expect(stripe.status).toBe(201);
    expect(stripe.body.data.affiliate).toMatchObject({ payout_method: 'stripe', stripe_account_id: 'acct_1Abc' });
    // Stored, not only echoed.
    expect((await org.api.get(`/api/affiliates/${stripe.body.data.affiliate.id}`)).body.data.affiliate).toMatchObject({
      payout_method: 'stripe',
      stripe_account_id: 'acct_1Abc',
    });

    expectError(
      await org.api.post('/api/affiliates', {
        email: 'bad@example.com',
        program_id: program.id,
        payout_method: 'cheque',
      }),
      400,
      /^payout_method: /,
    );
    expectError(
      await org.api.post('/api/affiliates', {
        email: 'bad@example.com',
        program_id: program.id,
        stripe_account_id: 'nope',
      }),
      400,
      'stripe_account_id: Expected a Stripe account id (acct_…)',
    );
    expect((await org.api.get('/api/affiliates?email=bad@example.com')).body.data.affiliates).toEqual([]);
  });

  it('the same e-mail may join another program with another slug', async () => {
    const m = await createMerchant();
    const p2 = (await m.api.post('/api/programs', { name: 'P2', commission_value: 5 })).body.data.program;
    const res = await m.api.post('/api/affiliates', { email: m.affiliate.email, program_id: p2.id });
    expect(res.status).toBe(201);
    expect(res.body.data.affiliate.slug).not.toBe(m.slug);
  });

  it('409 when the slug belongs to another membership of the organization', async () => {
    const m = await createMerchant();
    const res = await m.api.post('/api/affiliates', {
      email: 'other@example.com',
      program_id: m.program.id,
      slug: m.slug,
    });
    expectError(res, 409);
    expect(res.body.message).toContain(m.slug);
  });

  it('slugs are per organization: another organization may use the same slug', async () => {
    const m = await createMerchant();
    const other = await createOrganization();
    const p = (await other.api.post('/api/programs', { name: 'P', commission_value: 1 })).body.data.program;
    expect(
      (await other.api.post('/api/affiliates', { email: 'x@example.com', program_id: p.id, slug: m.slug })).status,
    ).toBe(201);
  });

  it('generates a valid slug when none is given', async () => {
    const org = await createOrganization();
    const p = (await org.api.post('/api/programs', { name: 'P', commission_value: 1 })).body.data.program;
    const res = await org.api.post('/api/affiliates', { email: 'Mary.Jones+promo@example.com', program_id: p.id });
    expect(res.status).toBe(201);
    expect(res.body.data.affiliate.slug).toMatch(/^[a-z0-9-]{2,64}$/);
  });

  it('404 for a program of another organization or none', async () => {
    const a = await createMerchant();
    const b = await createOrganization();
    expectError(await b.api.post('/api/affiliates', { email: 'x@example.com', program_id: a.program.id }), 404);
    expectError(
      await b.api.post('/api/affiliates', {
        email: 'x@example.com',
        program_id: '00000000-0000-4000-8000-000000000000',
      }),
      404,
    );
  });

  it.each([
    [{ program_id: '00000000-0000-4000-8000-000000000000' }, /^email: Required/],
    [{ email: 'not-an-email', program_id: '00000000-0000-4000-8000-000000000000' }, /^email: /],
    [{ email: 'a@example.com' }, /^program_id: Required/],
    [{ email: 'a@example.com', program_id: '00000000-0000-4000-8000-000000000000', slug: 'Bad Slug' }, /^slug: /],
    [{ email: 'a@example.com', program_id: '00000000-0000-4000-8000-000000000000', slug: 'a' }, /^slug: /],
    [{ email: 'a@example.com', program_id: '00000000-0000-4000-8000-000000000000', slug: 'under_score' }, /^slug: /],
  ])('400 naming the field for %j', async (body, message) => {
    const org = await createOrganization();
    expectError(await org.api.post('/api/affiliates', body), 400, message);
  });

  it('lists with filters and pagination; get by id; 403 across organizations', async () => {
    const m = await createMerchant();
    const p2 = (await m.api.post('/api/programs', { name: 'P2', commission_value: 5 })).body.data.program;
    for (let i = 0; i < 3; i++)
      await m.api.post('/api/affiliates', { email: `p2-${i}@example.com`, program_id: p2.id });

    const all = await m.api.get('/api/affiliates?limit=100');
    expect(all.body.data.affiliates).toHaveLength(4);
    const byProgram = await m.api.get(`/api/affiliates?program_id=${p2.id}&limit=2`);
    expect(byProgram.body.data.affiliates).toHaveLength(2);
    const rest = await m.api.get(
      `/api/affiliates?program_id=${p2.id}&limit=2&cursor=${byProgram.body.data.next_cursor}`,
    );
    expect(rest.body.data.affiliates).toHaveLength(1);
    expect(rest.body.data.next_cursor).toBeNull();
    const byEmail = await m.api.get(`/api/affiliates?email=${encodeURIComponent(m.affiliate.email)}`);
    expect(byEmail.body.data.affiliates.map((a: { id: string }) => a.id)).toEqual([m.affiliate.id]);

    expect((await m.api.get(`/api/affiliates/${m.affiliate.id}`)).body.data.affiliate).toEqual(m.affiliate);
    const other = await createOrganization();
    expectError(await other.api.get(`/api/affiliates/${m.affiliate.id}`), 403);
    expectError(await other.api.get('/api/affiliates/00000000-0000-4000-8000-000000000000'), 404);
  });

  it("a disabled affiliate's links attribute no new visitor (404), its referred customers keep earning; pending ones do not attribute; re-enabled, they do", async () => {
    const m = await createMerchant();
    const cookie = (await m.api.post('/api/clicks', { ref: m.slug })).body.data.click.cookie_id;
    expect((await m.api.post('/api/customers', { customer_id: 'cus_before', ref: m.slug })).status).toBe(201);

    const disabled = await m.api.patch(`/api/affiliates/${m.affiliate.id}`, { status: 'disabled' });
    expect(disabled.status).toBe(200);
    expect(disabled.body.data.affiliate).toMatchObject({ id: m.affiliate.id, status: 'disabled' });
    expectError(await m.api.post('/api/clicks', { ref: m.slug }), 404, 'No attribution found');
    expectError(
      await m.api.post('/api/customers', { customer_id: 'cus_after', ref: m.slug }),
      404,
      'No attribution found',
    );
    expectError(
      await m.api.post('/api/customers', { customer_id: 'cus_cookie', cookie_id: cookie }),
      404,
      'No attribution found',
    );
    expectError(
      await m.api.post('/api/conversions', { external_id: 'ch_ref', amount: 10, ref: m.slug }),
      404,
      'No attribution found',
    );
    // The customer referred before: its charges still earn, with their ledger entries.
    const renewal = await m.api.post('/api/conversions', {
      external_id: 'ch_renewal',
      amount: 100,
      customer_id: 'cus_before',
    });
    expect(renewal.status).toBe(201);
    expect(renewal.body.data.conversion).toMatchObject({ affiliate_id: m.affiliate.id, commission_amount: 30 });
    const entries = await m.api.get(`/api/commissions?affiliate_id=${m.affiliate.id}`);
    expect(entries.body.data.commissions).toEqual([
      expect.objectContaining({ conversion_id: renewal.body.data.conversion.id, amount: 30 }),
    ]);

    expect((await m.api.patch(`/api/affiliates/${m.affiliate.id}`, { status: 'pending' })).status).toBe(200);
    expectError(await m.api.post('/api/clicks', { ref: m.slug }), 404, 'No attribution found');
    expect(
      (await m.api.patch(`/api/affiliates/${m.affiliate.id}`, { status: 'active' })).body.data.affiliate.status,
    ).toBe('active');
    expect((await m.api.post('/api/clicks', { ref: m.slug })).status).toBe(201);
    expect((await m.api.post('/api/customers', { customer_id: 'cus_cookie', cookie_id: cookie })).status).toBe(201);

    expectError(await m.api.patch(`/api/affiliates/${m.affiliate.id}`, { status: 'gone' }), 400, /status/);
  });
});
