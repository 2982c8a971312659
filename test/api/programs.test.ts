import { describe, expect, it } from 'vitest';
import { createOrganization, expectError } from '../support/api.js';

describe('programs', () => {
  it('creates with the documented defaults', async () => {
    const org = await createOrganization();
    const res = await org.api.post('/api/programs', { name: 'Partners', commission_value: 20 });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      success: true,
      data: {
        program: {
          id: expect.any(String),
          name: 'Partners',
          commission_type: 'percent',
          commission_value: 20,
          click_window_days: 60,
          commission_window_months: null,
          currency: 'USD',
          // The ledger's settings (issue 14): a 30-day hold, approved by itself, every amount paid.
          hold_days: 30,
          auto_approve: true,
          minimum_payout: 0,
          // Program rules (issue 18): last click, no caps or tiers, the default fraud rules.
          attribution_model: 'last_click',
          commission_max_conversions: null,
          commission_tiers: null,
          fraud_rules: { self_referral: true, disposable_email: true, click_flood: true, fast_conversion: false },
          // The partner portal's (issue 17): partners apply and the merchant approves; no terms, no site yet.
          signup: 'approval',
          terms: null,
          website_url: null,
          // Payout rails (issue 40): no tax form needed unless the merchant asks.
          require_tax_form: false,
          created_at: expect.any(String),
          updated_at: expect.any(String),
          livemode: true,
        },
      },
    });
  });

  it('accepts every field and normalises the currency', async () => {
    const org = await createOrganization();
    const res = await org.api.post('/api/programs', {
      name: 'Flat EUR',
      commission_type: 'flat',
      commission_value: 12.5,
      click_window_days: 0,
      commission_window_months: 6,
      currency: 'eur',
    });
    expect(res.status).toBe(201);
    expect(res.body.data.program).toMatchObject({
      commission_type: 'flat',
      commission_value: 12.5,
      click_window_days: 0,
      commission_window_months: 6,
      currency: 'EUR',
    });
  });

  it.each([
    [{ commission_value: 10 }, /^name: Required/],
    [{ name: 'x' }, /^commission_value: Required/],
    [{ name: 'x', commission_value: '10' }, /^commission_value: Expected number, received string/],
    [{ name: 'x', commission_value: -1 }, /^commission_value: /],
    [{ name: 'x', commission_value: 1, commission_type: 'bogus' }, /^commission_type: /],
    [{ name: 'x', commission_value: 1, click_window_days: 1.5 }, /^click_window_days: /],
    [{ name: 'x', commission_value: 1, commission_window_months: 0 }, /^commission_window_months: /],
    [{ name: 'x', commission_value: 1, currency: 'dollars' }, /^currency: /],
  ])('400 naming the field for %j', async (body, message) => {
    const org = await createOrganization();
    expectError(await org.api.post('/api/programs', body), 400, message);
  });

  it('gets, updates and lists with cursor pagination', async () => {
    const org = await createOrganization();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push((await org.api.post('/api/programs', { name: `P${i}`, commission_value: i })).body.data.program.id);
    }
    const got = await org.api.get(`/api/programs/${ids[2]}`);
    expect(got.body.data.program.name).toBe('P2');

    const patched = await org.api.patch(`/api/programs/${ids[2]}`, {
      click_window_days: 7,
      commission_window_months: null,
      name: 'Renamed',
    });
    expect(patched.status).toBe(200);
    expect(patched.body.data.program).toMatchObject({
      id: ids[2],
      name: 'Renamed',
      click_window_days: 7,
      commission_window_months: null,
      commission_value: 2,
    });

    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: any = await org.api.get(`/api/programs?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.status).toBe(200);
      expect(page.body.data.programs.length).toBeLessThanOrEqual(2);
      seen.push(...page.body.data.programs.map((p: { id: string }) => p.id));
      cursor = page.body.data.next_cursor;
    } while (cursor);
    expect(seen).toEqual(ids);

    expectError(await org.api.get('/api/programs?cursor=garbage'), 400, /^cursor: /);
    expectError(await org.api.get('/api/programs?limit=0'), 400, /^limit: /);
  });

  it('403 for another organization’s program, 404 for none', async () => {
    const a = await createOrganization();
    const b = await createOrganization();
    const p = (await a.api.post('/api/programs', { name: 'A', commission_value: 1 })).body.data.program;
    expectError(await b.api.get(`/api/programs/${p.id}`), 403);
    expectError(await b.api.patch(`/api/programs/${p.id}`, { name: 'stolen' }), 403);
    expectError(await b.api.get('/api/programs/00000000-0000-4000-8000-000000000000'), 404);
    expectError(await b.api.get('/api/programs/nope'), 404);
    expect((await b.api.get('/api/programs')).body.data.programs).toEqual([]);
    expect((await a.api.get(`/api/programs/${p.id}`)).body.data.program.name).toBe('A');
  });
});
