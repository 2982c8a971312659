import { describe, expect, it } from 'vitest';
import { Db } from '../../server/src/db/sql.js';
import { addSourceLinkParam } from '../../server/src/modules/organizations/link-params.js';
import { createOrganization, expectError, request } from '../support/api.js';
import { testServer } from '../support/server.js';
import { sql } from 'kysely';

/** The organization's link parameters (issue 47, item 4): the query parameters that name a partner. */
describe('link parameters', () => {
  it('are ["ref"] by default, on GET /api/me and GET /api/link-params', async () => {
    const org = await createOrganization();
    const me = await org.api.get('/api/me');
    expect(me.status).toBe(200);
    expect(me.body.data.organization).toEqual({ id: org.id, name: org.name, livemode: true, link_params: ['ref'] });
    expect((await org.api.get('/api/link-params')).body).toEqual({ success: true, data: { link_params: ['ref'] } });
  });

  it('are replaced by PUT, shared by live and test mode, and shown on /api/me', async () => {
    const org = await createOrganization();
    const put = await org.api.put('/api/link-params', { link_params: ['ref', 'via', '_by'] });
    expect(put.body).toEqual({ success: true, data: { link_params: ['ref', 'via', '_by'] } });
    expect((await org.api.get('/api/me')).body.data.organization.link_params).toEqual(['ref', 'via', '_by']);
    // A test key reads and writes the account's one list.
    expect((await org.testApi.get('/api/me')).body.data.organization.link_params).toEqual(['ref', 'via', '_by']);
    expect((await org.testApi.put('/api/link-params', { link_params: ['via'] })).status).toBe(200);
    expect((await org.api.get('/api/link-params')).body.data.link_params).toEqual(['via']);
    // Another organization keeps its own.
    expect((await (await createOrganization()).api.get('/api/link-params')).body.data.link_params).toEqual(['ref']);
  });

  it('lets `ref` go only when another remains, and refuses unsafe, duplicate or too many names with 400', async () => {
    const org = await createOrganization();
    expectError(await org.api.put('/api/link-params', { link_params: [] }), 400, /link_params: at least one parameter/);
    expectError(await org.api.put('/api/link-params', {}), 400, /link_params/);
    expectError(
      await org.api.put('/api/link-params', { link_params: ['ref', 'a b'] }),
      400,
      /link_params\.1: must be a query-parameter name/,
    );
    for (const bad of ['', 'Via', 'x=y', 'a&b', '<script>', '9lives', 'a'.repeat(33)])
      expectError(await org.api.put('/api/link-params', { link_params: [bad] }), 400, /link_params/);
    expectError(
      await org.api.put('/api/link-params', { link_params: ['via', 'via'] }),
      400,
      /link_params: each parameter may be listed once/,
    );
    const eleven = Array.from({ length: 11 }, (_, i) => `p${i}`);
    expectError(await org.api.put('/api/link-params', { link_params: eleven }), 400, /link_params: at most 10/);
    // Nothing was changed by the refusals; `ref` goes once `via` stays.
    expect((await org.api.get('/api/link-params')).body.data.link_params).toEqual(['ref']);
    expect((await org.api.put('/api/link-params', { link_params: ['via'] })).body.data.link_params).toEqual(['via']);
    expect((await org.api.put('/api/link-params', { link_params: eleven.slice(0, 10) })).status).toBe(200);
  });

  it('are public for the snippet at /public/organizations/{id}/link-params, cacheable, the default for an unknown id', async () => {
    const org = await createOrganization();
    await org.api.put('/api/link-params', { link_params: ['ref', 'via'] });
    const got = await request('GET', `/public/organizations/${org.id}/link-params`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual({ success: true, data: { link_params: ['ref', 'via'] } });
    expect(got.headers.get('cache-control')).toBe('public, max-age=300');
    expect(got.headers.get('access-control-allow-origin')).toBe('*');
    const unknown = await request('GET', '/public/organizations/00000000-0000-4000-8000-000000000000/link-params');
    expect(unknown.body).toEqual({ success: true, data: { link_params: ['ref'] } });
    expectError(await request('GET', '/public/organizations/not-an-id/link-params'), 400, /organizationId/);
  });
});

describe('an import extends the link parameters with its source’s', () => {
  it('adds it once, at the end, to the account (from live or test data), never past ten; CSV and ref sources add nothing', async () => {
    const db = Db.of((await testServer()).db.orm);
    const org = await createOrganization();
    const params = async () => (await org.api.get('/api/link-params')).body.data.link_params;
    await addSourceLinkParam(db, org.id, 'rewardful');
    await addSourceLinkParam(db, org.id, 'rewardful');
    expect(await params()).toEqual(['ref', 'via']);
    // An import in test mode writes the twin's rows; the list is the account's.
    const twin = await db.one(sql<{ id: string }>`select id from organizations where live_organization_id = ${org.id}`);
    await addSourceLinkParam(db, twin!.id, 'firstpromoter');
    await addSourceLinkParam(db, org.id, 'partnerstack');
    for (const source of ['tolt', 'tapfiliate', 'csv']) await addSourceLinkParam(db, org.id, source);
    expect(await params()).toEqual(['ref', 'via', 'fpr', 'gspk']);

    const full = Array.from({ length: 10 }, (_, i) => `p${i}`);
    await org.api.put('/api/link-params', { link_params: full });
    await addSourceLinkParam(db, org.id, 'rewardful');
    expect(await params()).toEqual(full);
  });
});
