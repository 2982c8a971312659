import { describe, expect, it } from 'vitest';
import { createMerchant, createOrganization, expectError } from '../support/api.js';

describe('POST /api/clicks', () => {
  it('registers a click and returns click id and an opaque cookie id', async () => {
    const m = await createMerchant();
    const res = await m.api.post('/api/clicks', {
      ref: m.slug,
      landing_url: 'https://shop.example.com/?ref=' + m.slug,
      referrer: 'https://blog.example.org/',
      user_agent: 'Mozilla/5.0',
      ip: '203.0.113.9',
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      success: true,
      data: {
        click: {
          id: expect.stringMatching(/^[0-9a-f-]{36}$/),
          cookie_id: expect.stringMatching(/^ck_[A-Za-z0-9]{22}$/),
          kept_earlier_click: false,
          cookie_max_age_seconds: 60 * 86_400,
          suppressed: false,
          affiliate_id: m.affiliate.id,
          program_id: m.program.id,
          occurred_at: expect.any(String),
          created_at: expect.any(String),
          livemode: true,
        },
      },
    });
  });

  it("answers the cookie's lifetime: the program's click window in seconds", async () => {
    const m = await createMerchant({ click_window_days: 30 });
    const res = await m.api.post('/api/clicks', { ref: m.slug });
    expect(res.status).toBe(201);
    expect(res.body.data.click.cookie_max_age_seconds).toBe(30 * 86_400);
  });

  it('every click gets its own ids', async () => {
    const m = await createMerchant();
    const a = await m.api.post('/api/clicks', { ref: m.slug });
    const b = await m.api.post('/api/clicks', { ref: m.slug });
    expect(a.body.data.click.id).not.toBe(b.body.data.click.id);
    expect(a.body.data.click.cookie_id).not.toBe(b.body.data.click.cookie_id);
  });

  it('imports a past click with occurred_at', async () => {
    const m = await createMerchant();
    const res = await m.api.post('/api/clicks', { ref: m.slug, occurred_at: '2026-01-02T03:04:05+01:00' });
    expect(res.status).toBe(201);
    expect(res.body.data.click.occurred_at).toBe('2026-01-02T02:04:05.000Z');
  });

  it('404 "No attribution found" for an unknown ref or one of another organization', async () => {
    const m = await createMerchant();
    expectError(await m.api.post('/api/clicks', { ref: 'no-such-slug' }), 404, 'No attribution found');
    const other = await createOrganization();
    expectError(await other.api.post('/api/clicks', { ref: m.slug }), 404, 'No attribution found');
  });

  it('400 for a missing ref, a bad occurred_at, or one more than 5 minutes ahead', async () => {
    const m = await createMerchant();
    expectError(await m.api.post('/api/clicks', {}), 400, /^ref: Required/);
    expectError(await m.api.post('/api/clicks', { ref: m.slug, occurred_at: 'yesterday' }), 400, /^occurred_at: /);
    const future = new Date(Date.now() + 10 * 60_000).toISOString();
    expectError(await m.api.post('/api/clicks', { ref: m.slug, occurred_at: future }), 400, /^occurred_at: /);
  });
});
