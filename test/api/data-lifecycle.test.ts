import { describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { poolOf } from '../../server/src/db/database.js';
import { Db } from '../../server/src/db/sql.js';
import { pruneClicks } from '../../server/src/modules/clicks/click-retention.js';
import { hashToken } from '../../server/src/modules/partners/partners.service.js';
import { admin, createMerchant, expectError, request } from '../support/api.js';
import { testServer } from '../support/server.js';

/** Data that can be deleted where the domain allows (docs/data-lifecycle.md), through the API, on PostgreSQL. */

async function connection() {
  return (await testServer()).db.orm.em.getConnection();
}

/** A click through the API, then made `daysOld` days old in the database. */
async function clickOf(
  m: Awaited<ReturnType<typeof createMerchant>>,
  daysOld: number,
): Promise<{ id: string; cookie_id: string }> {
  const res = await m.api.post('/api/clicks', {
    ref: m.slug,
    ip: '203.0.113.7',
    user_agent: 'Mozilla/5.0 (retention test)',
  });
  expect(res.status).toBe(201);
  const click = res.body.data.click as { id: string; cookie_id: string };
  await (
    await connection()
  ).execute(
    `update clicks set created_at = now() - ? * interval '1 day', occurred_at = now() - ? * interval '1 day' where id = ?`,
    [daysOld, daysOld, click.id],
  );
  return click;
}

async function clickRow(id: string) {
  const [row] = await (
    await connection()
  ).execute<{ ip: string | null; user_agent: string | null }[]>(`select ip, user_agent from clicks where id = ?`, [id]);
  return row;
}

describe('click retention', () => {
  it('is a setting of the organization: null by default, 1 to 3650 days, null again', async () => {
    const m = await createMerchant();
    expect((await m.api.get('/api/data-retention')).body).toEqual({
      success: true,
      data: { data_retention: { click_retention_days: null } },
    });
    expect((await m.api.put('/api/data-retention', { click_retention_days: 30 })).body).toEqual({
      success: true,
      data: { data_retention: { click_retention_days: 30 } },
    });
    expect((await m.api.get('/api/data-retention')).body.data.data_retention.click_retention_days).toBe(30);
    expectError(await m.api.put('/api/data-retention', { click_retention_days: 0 }), 400, /click_retention_days/);
    expectError(await m.api.put('/api/data-retention', {}), 400, /click_retention_days/);
    expect(
      (await m.api.put('/api/data-retention', { click_retention_days: null })).body.data.data_retention
        .click_retention_days,
    ).toBe(null);
  });

  it('deletes old clicks nothing refers to, clears the IP and user agent of those the ledger refers to, and keeps the rest', async () => {
    const { db } = await testServer();
    const m = await createMerchant({ click_window_days: 7 });
    const old = await clickOf(m, 40);
    const converted = await clickOf(m, 0);
    const conversion = await m.api.post('/api/conversions', {
      external_id: 'kept-1',
      amount: 50,
      cookie_id: converted.cookie_id,
    });
    expect(conversion.status).toBe(201);
    await (
      await connection()
    ).execute(`update clicks set created_at = now() - interval '40 days' where id = ?`, [converted.id]);
    const recent = await clickOf(m, 5);
    // A longer click window than the retention: a click a visitor may still convert on stays.
    const longWindow = await createMerchant({ click_window_days: 60 });
    const withinWindow = await clickOf(longWindow, 40);
    // An organization without a retention keeps everything.
    const keeper = await createMerchant({ click_window_days: 7 });
    const keptForever = await clickOf(keeper, 400);
    for (const org of [m, longWindow])
      expect((await org.api.put('/api/data-retention', { click_retention_days: 30 })).status).toBe(200);
    const commissionsBefore = await (
      await connection()
    ).execute(`select id, amount, status from commissions where organization_id = ? order by id`, [m.id]);

    const pruned = await pruneClicks((statement) => Db.of(db.orm).rows(statement), new Date(), { batch: 2 });
    expect(pruned.deleted).toBeGreaterThanOrEqual(1);
    expect(pruned.cleared).toBeGreaterThanOrEqual(1);

    expect(await clickRow(old.id)).toBeUndefined();
    expect(await clickRow(converted.id)).toEqual({ ip: null, user_agent: null });
    expect(await clickRow(recent.id)).toEqual({ ip: '203.0.113.7', user_agent: 'Mozilla/5.0 (retention test)' });
    expect(await clickRow(withinWindow.id)).toEqual({ ip: '203.0.113.7', user_agent: 'Mozilla/5.0 (retention test)' });
    expect(await clickRow(keptForever.id)).toEqual({ ip: '203.0.113.7', user_agent: 'Mozilla/5.0 (retention test)' });
    // The ledger is untouched: the conversion keeps its click, the entries their amounts.
    const got = await m.api.get(`/api/conversions/${conversion.body.data.conversion.id}`);
    expect(got.body.data.conversion.click_id).toBe(converted.id);
    expect(
      await (
        await connection()
      ).execute(`select id, amount, status from commissions where organization_id = ? order by id`, [m.id]),
    ).toEqual(commissionsBefore);
    // A second run finds nothing more to do for them.
    const again = await pruneClicks((statement) => Db.of(db.orm).rows(statement), new Date());
    expect(await clickRow(converted.id)).toEqual({ ip: null, user_agent: null });
    expect(again.cleared).toBe(0);
  });
});

describe('erasing a partner on request', () => {
  it('removes the name and e-mails in every membership of the person, keeps the ledger, and the partner can no longer sign in', async () => {
    const m = await createMerchant();
    const email = m.affiliate.email as string;
    await m.api.patch(`/api/affiliates/${m.affiliate.id}`, {
      name: 'Ada Partner',
      payout_email: 'ada.payouts@example.com',
    });
    const second = (await m.api.post('/api/programs', { name: 'Second', commission_value: 10 })).body.data.program;
    const other = (await m.api.post('/api/affiliates', { email, program_id: second.id, name: 'Ada Partner' })).body.data
      .affiliate;
    const bystander = (
      await m.api.post('/api/affiliates', { email: `by-${m.slug}@example.com`, program_id: second.id })
    ).body.data.affiliate;
    expect((await m.api.post('/api/conversions', { external_id: 'erase-1', amount: 80, ref: m.slug })).status).toBe(
      201,
    );
    const db = await connection();
    const ledger = () =>
      db.execute(
        `select type, amount, status, affiliate_id from commissions where organization_id = ? order by created_at`,
        [m.id],
      );
    const ledgerBefore = await ledger();
    await db.execute(
      `insert into partner_sessions (id, organization_id, email, token_hash, expires_at) values (gen_random_uuid(), ?, ?, 'h-' || gen_random_uuid(), now() + interval '1 day')`,
      [m.id, email],
    );
    const base = (await testServer()).baseUrl;
    const askLink = () =>
      request('POST', `/partner/api/organizations/${m.id}/sign-in-links`, {
        body: { email },
        headers: { origin: base },
      });
    expect((await askLink()).status).toBe(202);
    const links = () =>
      db.execute<{ n: number }[]>(`select count(*)::int as n from partner_sign_in_links where organization_id = ?`, [
        m.id,
      ]);
    expect(await links()).toEqual([{ n: 1 }]);

    const erased = await m.api.post(`/api/affiliates/${m.affiliate.id}/erase`);
    expect(erased.status).toBe(200);
    expect(erased.body.data.affiliate).toMatchObject({
      id: m.affiliate.id,
      email: `erased-${m.affiliate.id}@erased.invalid`,
      name: null,
      payout_email: null,
      status: 'disabled',
    });
    expect((await m.api.get(`/api/affiliates/${other.id}`)).body.data.affiliate).toMatchObject({
      email: `erased-${other.id}@erased.invalid`,
      name: null,
      status: 'disabled',
    });
    expect((await m.api.get(`/api/affiliates/${bystander.id}`)).body.data.affiliate.email).toBe(
      `by-${m.slug}@example.com`,
    );
    expect((await m.api.get(`/api/affiliates?email=${encodeURIComponent(email)}`)).body.data.affiliates).toEqual([]);
    expect(await ledger()).toEqual(ledgerBefore);
    expect(
      await db.execute(`select count(*)::int as n from partner_sessions where organization_id = ?`, [m.id]),
    ).toEqual([{ n: 0 }]);
    expect(await links()).toEqual([{ n: 0 }]);
    // No membership answers to the e-mail any more: no sign-in link is made for it.
    expect((await askLink()).status).toBe(202);
    expect(await links()).toEqual([{ n: 0 }]);
    // Nothing of the person is left in the organization's rows.
    const traces = await db.execute<{ n: number }[]>(
      `select (select count(*) from affiliates where organization_id = ? and (email = ? or name is not null and id in (?, ?)))::int
        + (select count(*) from outbound_events where organization_id = ? and resource::text like '%' || ? || '%')::int as n`,
      [m.id, email, m.affiliate.id, other.id, m.id, email],
    );
    expect(traces).toEqual([{ n: 0 }]);
    // A repeat answers the erased membership; the links attribute nothing.
    expect((await m.api.post(`/api/affiliates/${m.affiliate.id}/erase`)).body.data.affiliate.email).toBe(
      `erased-${m.affiliate.id}@erased.invalid`,
    );
    expectError(await m.api.post('/api/clicks', { ref: m.slug }), 404);
  });

  it('leaves no copy of the person in any table, live or test twin: e-mail, name, sign-in address and browser, slug, alias, coupon code', async () => {
    const m = await createMerchant();
    const db = await connection();
    const pool = poolOf((await testServer()).db.orm);
    const base = (await testServer()).baseUrl;
    const mark = randomBytes(4).toString('hex');
    const email = m.affiliate.email as string;
    const name = `Zelda Quux ${mark}`;
    const userAgent = `ErasureTestBrowser/${mark}`;
    const alias = `zq-alias-${mark}`;
    const coupon = `ZQCODE${mark}`.toUpperCase();
    const [twin] = await db.execute<{ id: string }[]>('select id from organizations where live_organization_id = ?', [
      m.id,
    ]);
    const twinId = twin.id;
    expect(
      (await m.api.patch(`/api/affiliates/${m.affiliate.id}`, { name, payout_email: `payouts-${mark}@example.com` }))
        .status,
    ).toBe(200);
    // An alias holds its link token (Migration20270121000000_link_tokens).
    for (const table of ['affiliate_link_tokens', 'affiliate_link_aliases'])
      await db.execute(`insert into ${table} (organization_id, token, affiliate_id, program_id) values (?, ?, ?, ?)`, [
        m.id,
        alias,
        m.affiliate.id,
        m.program.id,
      ]);
    expect((await m.api.post('/api/coupons', { code: coupon, affiliate_id: m.affiliate.id })).status).toBe(201);
    expect((await m.api.post('/api/clicks', { ref: alias })).status).toBe(201);
    expect(
      (await m.api.post('/api/conversions', { external_id: `erase-scan-${mark}`, amount: 80, ref: m.slug })).status,
    ).toBe(201);
    // The merchant tried the partner's side in test mode with the same person: same e-mail, name and slug.
    const testProgram = (await m.testApi.post('/api/programs', { name: 'Test', commission_value: 10 })).body.data
      .program;
    expect(
      (await m.testApi.post('/api/affiliates', { email, program_id: testProgram.id, name, slug: m.slug })).status,
    ).toBe(201);
    // Signed in to the portal, live and test: a session, and the sign-in address and browser on the memberships.
    for (const organizationId of [m.id, twinId]) {
      const token = randomBytes(32).toString('base64url');
      await db.execute(
        `insert into partner_sign_in_links (id, organization_id, email, token_hash, expires_at) values (gen_random_uuid(), ?, ?, ?, now() + interval '15 minutes')`,
        [organizationId, email, hashToken(token)],
      );
      const signedIn = await request('POST', '/partner/api/sign-in', {
        body: { organization_id: organizationId, token },
        headers: { origin: base, 'user-agent': userAgent },
      });
      expect(signedIn.status).toBe(200);
      // And a link asked for: the test twin keeps its e-mail (with the link) as a test e-mail.
      expect(
        (
          await request('POST', `/partner/api/organizations/${organizationId}/sign-in-links`, {
            body: { email },
            headers: { origin: base },
          })
        ).status,
      ).toBe(202);
    }
    const [affiliateRow] = await db.execute<{ portal_sign_in_ip: string }[]>(
      'select portal_sign_in_ip from affiliates where id = ?',
      [m.affiliate.id],
    );
    const ip = affiliateRow.portal_sign_in_ip;
    expect(ip).toBeTruthy();

    // Every text column of every table, read from the catalog (a table or column added later is scanned too).
    const scan = async (needles: string[], organizations: string[] | null) => {
      const columns = await db
        .execute<{ table: string; column: string }[]>(
          `select c.relname as "table", a.attname as "column" from pg_attribute a join pg_class c on c.oid = a.attrelid
          where c.relnamespace = current_schema()::regnamespace and c.relkind = 'r' and a.attnum > 0 and not a.attisdropped
            and a.atttypid in ('text'::regtype, 'varchar'::regtype, 'bpchar'::regtype, 'json'::regtype, 'jsonb'::regtype, 'inet'::regtype, to_regtype('citext'))
          order by 1, 2`,
        )
        .catch(() =>
          db.execute<{ table: string; column: string }[]>(
            `select c.relname as "table", a.attname as "column" from pg_attribute a join pg_class c on c.oid = a.attrelid
            where c.relnamespace = current_schema()::regnamespace and c.relkind = 'r' and a.attnum > 0 and not a.attisdropped
              and a.atttypid in ('text'::regtype, 'varchar'::regtype, 'bpchar'::regtype, 'json'::regtype, 'jsonb'::regtype, 'inet'::regtype)
            order by 1, 2`,
          ),
        );
      const scoped = new Set(
        (
          await db.execute<{ table: string }[]>(
            `select c.relname as "table" from pg_attribute a join pg_class c on c.oid = a.attrelid
          where c.relnamespace = current_schema()::regnamespace and c.relkind = 'r' and a.attname = 'organization_id' and not a.attisdropped`,
          )
        ).map((r) => r.table),
      );
      const found: string[] = [];
      for (const { table, column } of columns) {
        if (organizations && !scoped.has(table)) continue;
        const where = organizations ? ` and organization_id = any ($2::uuid[])` : '';
        for (const needle of needles) {
          const { rows } = await pool.query<{ n: number }>(
            `select count(*)::int as n from "${table}" where position(lower($1) in lower("${column}"::text)) > 0${where}`,
            organizations ? [needle, organizations] : [needle],
          );
          if (rows[0].n > 0) found.push(`${table}.${column}: ${needle}`);
        }
      }
      return found;
    };
    const needles = [email, name, userAgent, m.slug, alias, coupon];
    // Before: the scan finds every one of them (it can fail).
    const before = await scan([...needles], null);
    for (const needle of needles)
      expect(
        before.some((f) => f.endsWith(`: ${needle}`)),
        needle,
      ).toBe(true);
    expect(await scan([ip], [m.id, twinId])).not.toEqual([]);

    expect((await m.api.post(`/api/affiliates/${m.affiliate.id}/erase`)).status).toBe(200);

    expect(await scan(needles, null)).toEqual([]);
    // The sign-in address (a loopback address here, shared with other tests' rows) within the two organizations.
    expect(await scan([ip], [m.id, twinId])).toEqual([]);
    for (const table of ['partner_sessions', 'partner_sign_in_links']) {
      expect(
        (
          await pool.query(`select count(*)::int as n from ${table} where organization_id = any ($1::uuid[])`, [
            [m.id, twinId],
          ])
        ).rows,
        table,
      ).toEqual([{ n: 0 }]);
    }
    // The coupon stays (anonymised), as does the ledger; the old slug, alias and code attribute nothing.
    const coupons = (await m.api.get(`/api/coupons?affiliate_id=${m.affiliate.id}`)).body.data.coupons;
    expect(coupons).toHaveLength(1);
    expect(coupons[0].code).toMatch(/^erased-[0-9a-f]{32}$/);
    expectError(await m.api.post('/api/clicks', { ref: m.slug }), 404);
    expectError(await m.api.post('/api/clicks', { ref: alias }), 404);
    expectError(
      await m.api.post('/api/conversions', { external_id: `after-${mark}`, amount: 10, coupon }),
      404,
      'No attribution found',
    );
    // The slug is free again, for a new partner whose links then attribute to them (no cache holds the old owner).
    const newcomer = (
      await m.api.post('/api/affiliates', { email: `new-${mark}@example.com`, program_id: m.program.id, slug: m.slug })
    ).body.data.affiliate;
    expect((await m.api.post('/api/clicks', { ref: m.slug })).body.data.click.affiliate_id).toBe(newcomer.id);
  });

  it('answers 404 for no such affiliate and 403 for another organization’s', async () => {
    const m = await createMerchant();
    const other = await createMerchant();
    expect((await m.api.post(`/api/affiliates/00000000-0000-4000-8000-000000000000/erase`)).status).toBe(404);
    expect((await m.api.post(`/api/affiliates/${other.affiliate.id}/erase`)).status).toBe(403);
  });
});

/** A browser's user agent: the public endpoints record nothing for bots. */
const BROWSER_USER_AGENT =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

/** Polls the organization's deletion until it is finished (the job deletes in batches), and answers it. */
async function finishedDeletion(id: string) {
  for (const started = Date.now(); Date.now() - started < 30_000; await new Promise((r) => setTimeout(r, 100))) {
    const res = await admin().get(`/admin/organizations/${id}/deletion`);
    expect(res.status).toBe(200);
    if (res.body.data.deletion.finished_at) return res.body.data.deletion;
  }
  throw new Error('the deletion did not finish in 30 s');
}

describe('an operator deleting an organization', () => {
  it('makes it unusable at once, deletes everything it owns by a job, reports the counts, and leaves other organizations alone', async () => {
    const m = await createMerchant();
    const survivor = await createMerchant();
    const click = await m.api.post('/api/clicks', { ref: m.slug });
    expect(
      (
        await m.api.post('/api/conversions', {
          external_id: 'gone-1',
          amount: 30,
          cookie_id: click.body.data.click.cookie_id,
        })
      ).status,
    ).toBe(201);
    expect((await m.api.post('/api/customers', { customer_id: 'cus_gone', ref: m.slug })).status).toBe(201);
    expect(
      (await m.api.post('/api/conversions', { external_id: 'gone-2', amount: 20, customer_id: 'cus_gone' })).status,
    ).toBe(201);
    expect(
      (await m.api.post('/api/commissions', { affiliate_id: m.affiliate.id, amount: 5, description: 'Bonus' })).status,
    ).toBeLessThan(300);
    expect(
      (await survivor.api.post('/api/conversions', { external_id: 'stay-1', amount: 30, ref: survivor.slug })).status,
    ).toBe(201);
    // Its test data goes with it: the test twin, its program and its key.
    expect((await m.testApi.post('/api/programs', { name: 'Test', commission_value: 10 })).status).toBe(201);

    const unauthorized = await request('DELETE', `/admin/organizations/${m.id}`);
    expect(unauthorized.status).toBe(401);
    expectError(await admin().get(`/admin/organizations/${m.id}/deletion`), 404, /No deletion of this organization/);
    const res = await admin().delete(`/admin/organizations/${m.id}`);
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect(res.body.data.deletion).toMatchObject({
      organization_id: m.id,
      status: 'queued',
      phase: null,
      error: null,
      finished_at: null,
    });
    // Unusable at once, whatever the job has done yet: keys refused, the operator's routes answer 404.
    expect((await m.api.get('/api/me')).status).toBe(401);
    expect((await m.testApi.get('/api/me')).status).toBe(401);
    expectError(await admin().get(`/admin/organizations/${m.id}/api-keys`), 404);
    // Its links attribute nothing any more: the snippet, still on its pages, records no click meanwhile.
    expectError(
      await request('POST', `/public/organizations/${m.id}/clicks`, {
        body: { ref: m.slug },
        headers: { 'user-agent': BROWSER_USER_AGENT },
      }),
      404,
      'No attribution found',
    );
    // Asked again while it runs: the same deletion (or 404 once the job has finished).
    const again = await admin().delete(`/admin/organizations/${m.id}`);
    if (again.status === 202) expect(again.body.data.deletion.id).toBe(res.body.data.deletion.id);
    else expect(again.status).toBe(404);

    const deletion = await finishedDeletion(m.id);
    expect(deletion).toMatchObject({ id: res.body.data.deletion.id, status: 'completed', phase: null, error: null });
    expect(deletion.deleted).toMatchObject({
      organizations: 2,
      programs: 2,
      affiliates: 1,
      clicks: 1,
      customers: 1,
      conversions: 2,
      api_keys: 2,
    });
    expect(deletion.deleted.commissions).toBeGreaterThanOrEqual(3);

    const db = await connection();
    const left = await db.execute<{ n: number }[]>(
      `select ((select count(*) from organizations where id = ?) + (select count(*) from conversions where organization_id = ?)
        + (select count(*) from commissions where organization_id = ?) + (select count(*) from clicks where organization_id = ?))::int as n`,
      [m.id, m.id, m.id, m.id],
    );
    expect(left).toEqual([{ n: 0 }]);
    expect((await m.api.get('/api/me')).status).toBe(401);
    expect((await m.testApi.get('/api/me')).status).toBe(401);
    expect(await db.execute(`select id from organizations where live_organization_id = ?`, [m.id])).toEqual([]);
    expect((await survivor.api.get('/api/conversions')).body.data.conversions).toHaveLength(1);
    expect((await survivor.api.get('/api/me')).status).toBe(200);
    expect((await admin().delete(`/admin/organizations/${m.id}`)).status).toBe(404);
    // The receipt outlives the organization.
    expect((await admin().get(`/admin/organizations/${m.id}/deletion`)).body.data.deletion).toEqual(deletion);
  });
});
