import { describe, expect, it } from 'vitest';
import { isSameVisit, SAME_VISIT_WINDOW_MS } from '../../server/src/attribution/same-visit.js';
import { createMerchant, request } from '../support/api.js';
import { testServer } from '../support/server.js';

/**
 * One visit, one click (attribution/same-visit.ts): a second capture of the same visit (the server
 * middleware and the snippet on one page, the snippet then the middleware on the next page, a
 * reload) sends the cookie the first capture set, and is answered with that click, recording
 * nothing; a later visit, or another affiliate's link, is a click of its own.
 */
const BROWSER_UA =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';
const MINUTE = 60_000;

async function clickRows(organizationId: string) {
  const { db } = await testServer();
  return db.orm.em
    .getConnection()
    .execute<{ id: string; cookie_id: string; affiliate_id: string }[]>(
      'select id, cookie_id, affiliate_id from clicks where organization_id = ? order by created_at',
      [organizationId],
    );
}

/** The snippet's click: JSON in text/plain, from a browser. */
function snippetClick(organizationId: string, body: { ref: string; cookieId?: string }) {
  return request('POST', `/public/organizations/${organizationId}/clicks`, {
    rawBody: JSON.stringify({ landingUrl: 'https://shop.example.com/?ref=' + body.ref, ...body }),
    headers: {
      'content-type': 'text/plain;charset=UTF-8',
      'user-agent': BROWSER_UA,
      origin: 'https://shop.example.com',
    },
  });
}

describe('isSameVisit', () => {
  const earlier = { affiliate_id: 'a', occurred_at: new Date('2026-11-28T10:00:00Z') };
  it('the same affiliate within 30 minutes, either way round: the same visit', () => {
    expect(SAME_VISIT_WINDOW_MS).toBe(30 * MINUTE);
    expect(isSameVisit(earlier, 'a', new Date('2026-11-28T10:00:01Z'))).toBe(true);
    expect(isSameVisit(earlier, 'a', new Date('2026-11-28T10:30:00Z'))).toBe(true);
    expect(isSameVisit(earlier, 'a', new Date('2026-11-28T09:59:59Z'))).toBe(true);
  });
  it('later than 30 minutes, another affiliate, or no earlier click: a new visit', () => {
    expect(isSameVisit(earlier, 'a', new Date('2026-11-28T10:30:00.001Z'))).toBe(false);
    expect(isSameVisit(earlier, 'b', new Date('2026-11-28T10:00:01Z'))).toBe(false);
    expect(isSameVisit(undefined, 'a', new Date('2026-11-28T10:00:01Z'))).toBe(false);
  });
});

describe('POST /api/clicks and the snippet endpoint: one visit, one click', () => {
  it('the middleware, then the snippet on the same page with the cookie the middleware set: one click row, the snippet answered that cookie, kept', async () => {
    const m = await createMerchant({ click_window_days: 30 });
    const first = await m.api.post('/api/clicks', { ref: m.slug, user_agent: BROWSER_UA, ip: '203.0.113.7' });
    expect(first.status).toBe(201);
    const click = first.body.data.click;
    const again = await snippetClick(m.id, { ref: m.slug.toUpperCase(), cookieId: click.cookie_id });
    expect(again.status).toBe(201);
    expect(again.body).toEqual({
      success: true,
      data: { click: { cookie_id: click.cookie_id, cookie_max_age_seconds: 30 * 86_400, kept: true, livemode: true } },
    });
    expect(await clickRows(m.id)).toEqual([{ id: click.id, cookie_id: click.cookie_id, affiliate_id: m.affiliate.id }]);
  });

  it('the snippet, then the middleware on the next page with the cookie the snippet wrote: the API answers the same click, kept, and records nothing', async () => {
    const m = await createMerchant();
    const first = await snippetClick(m.id, { ref: m.slug });
    expect(first.status).toBe(201);
    const cookieId: string = first.body.data.click.cookie_id;
    const [row] = await clickRows(m.id);
    const again = await m.api.post('/api/clicks', { ref: m.slug, cookie_id: cookieId, user_agent: BROWSER_UA });
    expect(again.status).toBe(201);
    expect(again.body.data.click).toEqual({
      id: row.id,
      cookie_id: cookieId,
      kept_earlier_click: true,
      cookie_max_age_seconds: 60 * 86_400,
      suppressed: false,
      affiliate_id: m.affiliate.id,
      program_id: m.program.id,
      occurred_at: expect.any(String),
      created_at: expect.any(String),
      livemode: true,
    });
    expect(await clickRows(m.id)).toHaveLength(1);
  });

  it('also under the first_click model: the same visit records nothing more', async () => {
    const m = await createMerchant({ attribution_model: 'first_click' });
    const first = await m.api.post('/api/clicks', { ref: m.slug });
    const again = await m.api.post('/api/clicks', { ref: m.slug, cookie_id: first.body.data.click.cookie_id });
    expect(again.body.data.click).toMatchObject({
      id: first.body.data.click.id,
      cookie_id: first.body.data.click.cookie_id,
      kept_earlier_click: true,
    });
    expect(await clickRows(m.id)).toHaveLength(1);
  });

  it('a later visit (the cookie is a click more than 30 minutes old) is a new click, and replaces the cookie', async () => {
    const m = await createMerchant();
    const old = await m.api.post('/api/clicks', {
      ref: m.slug,
      occurred_at: new Date(Date.now() - 31 * MINUTE).toISOString(),
    });
    const recent = await m.api.post('/api/clicks', {
      ref: m.slug,
      occurred_at: new Date(Date.now() - 29 * MINUTE).toISOString(),
    });
    const later = await m.api.post('/api/clicks', { ref: m.slug, cookie_id: old.body.data.click.cookie_id });
    expect(later.body.data.click).toMatchObject({ kept_earlier_click: false, suppressed: false });
    expect(later.body.data.click.cookie_id).not.toBe(old.body.data.click.cookie_id);
    const sameVisit = await m.api.post('/api/clicks', { ref: m.slug, cookie_id: recent.body.data.click.cookie_id });
    expect(sameVisit.body.data.click).toMatchObject({ id: recent.body.data.click.id, kept_earlier_click: true });
    expect((await clickRows(m.id)).map((r) => r.cookie_id)).toEqual([
      old.body.data.click.cookie_id,
      recent.body.data.click.cookie_id,
      later.body.data.click.cookie_id,
    ]);
  });

  it("another affiliate's link in the same minute is a new click (last click wins), and so is a visit without the cookie", async () => {
    const m = await createMerchant();
    const other = await m.api.post('/api/affiliates', {
      email: `other-${m.slug}@example.com`,
      program_id: m.program.id,
      slug: `o-${m.slug}`,
    });
    expect(other.status).toBe(201);
    const first = await m.api.post('/api/clicks', { ref: m.slug });
    const switched = await snippetClick(m.id, { ref: `o-${m.slug}`, cookieId: first.body.data.click.cookie_id });
    expect(switched.body.data.click.kept).toBe(false);
    expect(switched.body.data.click.cookie_id).not.toBe(first.body.data.click.cookie_id);
    const fresh = await snippetClick(m.id, { ref: m.slug });
    expect(fresh.body.data.click.kept).toBe(false);
    expect((await clickRows(m.id)).map((r) => r.affiliate_id)).toEqual([
      m.affiliate.id,
      other.body.data.affiliate.id,
      m.affiliate.id,
    ]);
  });

  it("a cookie of another organization's click is not this visit: a click of its own", async () => {
    const a = await createMerchant();
    const b = await createMerchant();
    const foreign = await a.api.post('/api/clicks', { ref: a.slug });
    const res = await b.api.post('/api/clicks', { ref: b.slug, cookie_id: foreign.body.data.click.cookie_id });
    expect(res.body.data.click.kept_earlier_click).toBe(false);
    expect(await clickRows(b.id)).toHaveLength(1);
  });
});
