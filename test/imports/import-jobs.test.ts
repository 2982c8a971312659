import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createImports } from '../../server/src/modules/imports/imports.module.js';
import { isolatedTestServer, TEST_ADMIN_TOKEN, type TestServer } from '../support/server.js';
import { startRewardfulStandin, type Standin } from './rewardful-standin.js';

/**
 * The import job's own guarantees, with a runner of the test's own (fast retries of the source) on
 * a database of its own: on the worker's shared database the app's runner, started by another
 * file's imports, would take jobs from the same queue with its own sources and pauses. Here: a job stopped mid-way goes on from its last committed page and counts
 * every row once; CSV imports with the documented header (docs/imports.md).
 * Stand-in: Rewardful's documented API (https://developers.rewardful.com/rest-api/overview).
 */
const SECRET = 'jobs-secret';
const link = (token: string) => ({ id: `l-${token}`, token });
const affiliates = Array.from({ length: 5 }, (_, i) => ({
  id: `a${i}`,
  email: `p${i}@example.com`,
  first_name: `P${i}`,
  last_name: 'X',
  state: 'active',
  paypal_email: null,
  links: [link(`p${i}-link`)],
}));
const commissions = Array.from({ length: 5 }, (_, i) => ({
  id: `c${i}`,
  amount: 100 + i,
  currency: 'USD',
  state: 'due',
  due_at: '2024-02-01T00:00:00.000Z',
  paid_at: null,
  voided_at: null,
  sale: {
    id: `s${i}`,
    currency: 'USD',
    charged_at: '2024-01-0' + (i + 1) + 'T00:00:00.000Z',
    sale_amount_cents: 1000 + i,
    refund_amount_cents: 0,
    referral: { id: `r${i}`, customer: { id: `cus_${i}`, email: null, name: null }, affiliate: { id: `a${i}` } },
  },
}));

let standin: Standin;
let imports: ReturnType<typeof createImports>;
let server: TestServer;
beforeAll(async () => {
  standin = await startRewardfulStandin(SECRET, { affiliates, referrals: [], payouts: [], commissions });
  server = await isolatedTestServer();
  const { db } = server;
  imports = createImports(db.orm, pino({ level: 'silent' }), {
    baseUrls: { rewardful: standin.url },
    sleep: () => new Promise((r) => setTimeout(r, 5)),
    runner: { maxAttempts: 4, retryDelayMs: () => 20 },
  });
});
afterAll(async () => {
  await imports.runner.stop();
  await standin.close();
});

async function post(path: string, authorization: string, body: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${server.baseUrl}${path}`, {
    method: 'POST',
    headers: { authorization, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

async function get(path: string, authorization: string): Promise<{ status: number; body: any }> {
  const res = await fetch(`${server.baseUrl}${path}`, { headers: { authorization } });
  return { status: res.status, body: await res.json() };
}

/** An organization and a program on this file's own server. */
async function program() {
  const created = await post('/admin/organizations', `Bearer ${TEST_ADMIN_TOKEN}`, { name: `Jobs ${Date.now()}` });
  expect(created.status).toBe(201);
  const key = `Bearer ${created.body.data.api_key}`;
  const org = {
    id: created.body.data.organization.id as string,
    api: { get: (path: string) => get(path, key), post: (path: string, body: unknown) => post(path, key, body) },
  };
  const p = await post('/api/programs', key, { name: 'Main', commission_value: 30 });
  expect(p.status).toBe(201);
  return { org, programId: p.body.data.program.id as string };
}

async function until<T>(read: () => Promise<T>, ok: (value: T) => boolean, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (ok(value)) return value;
    if (Date.now() > end) throw new Error(`not reached in ${ms} ms: ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function finished(orgId: string, id: string) {
  for (let i = 0; i < 600; i++) {
    const found = await imports.service.get(orgId, id);
    if (found.status !== 'running') return found;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('still running');
}

describe('import jobs', () => {
  it(
    'a job stopped by a failing source resumes at the page it stopped on, and counts every row once',
    { timeout: 90_000 },
    async () => {
      const { org, programId } = await program();
      // Page 2 of the commissions fails more times than one try's quick retries (3): the try ends,
      // and the import is tried again as a delayed job (the fourth try, of four, gets through).
      standin.failures.set('/v1/commissions?page=2', 9);
      const started = await imports.service.create(org.id, {
        source: 'rewardful',
        credentials: { api_secret: SECRET },
        program_id: programId,
        dry_run: false,
      });
      const done = await finished(org.id, started.id);
      expect(done.status, done.error ?? '').toBe('succeeded');
      expect(done.counts.affiliates).toEqual({ created: 5, already_present: 0, skipped: 0 });
      expect(done.counts.commissions).toEqual({ created: 5, already_present: 0, skipped: 0 });
      expect(done.counts.conversions).toEqual({ created: 5, already_present: 0, skipped: 0 });
      // The second attempt did not read the affiliates again: it went on from commissions page 2.
      const affiliatePageOne = standin.requests.filter(
        (r) => r.path.startsWith('/v1/affiliates?') && r.path.includes('page=1&'),
      );
      expect(affiliatePageOne).toHaveLength(1);
      expect((await org.api.get('/api/commissions?limit=100')).body.data.commissions).toHaveLength(5);
    },
  );

  it(
    'a source that keeps failing fails the import after its last try, saying so and promising no further try',
    { timeout: 60_000 },
    async () => {
      const { org, programId } = await program();
      standin.failures.set('/v1/affiliates?page=1', 1000);
      try {
        const started = await imports.service.create(org.id, {
          source: 'rewardful',
          credentials: { api_secret: SECRET },
          program_id: programId,
          dry_run: false,
        });
        const waiting = await until(
          () => imports.service.get(org.id, started.id),
          (i) => i.progress.retry !== null,
        );
        expect(waiting).toMatchObject({
          status: 'running',
          progress: { retry: { attempt: 2, max_attempts: 4, reason: 'Rewardful answered HTTP 500' } },
        });
        // The wait is visible at once, with why and when the next try is.
        expect(waiting.error).toBe(
          `Rewardful answered HTTP 500: trying again at ${waiting.progress.retry!.at} (try 2 of 4).`,
        );
        const done = await finished(org.id, started.id);
        expect(done.status).toBe('failed');
        expect(done.error).toBe(
          'Rewardful answered HTTP 500, on each of 4 tries; the import stopped. What it imported so far is kept: start it again to go on (nothing is imported twice).',
        );
        expect(done.progress.retry).toBeNull();
        // Four tries of three requests each, none after the last.
        expect(
          standin.requests.filter(
            (r) => r.path.startsWith('/v1/affiliates?') && r.path.includes('page=1&') && r.status === 500,
          ),
        ).toHaveLength(12);
      } finally {
        standin.failures.delete('/v1/affiliates?page=1');
      }
    },
  );

  it(
    'imports affiliates and conversions from CSV, skipping rows it cannot map with their reason',
    { timeout: 60_000 },
    async () => {
      const { org, programId } = await program();
      const affiliates_csv =
        'id,email,first_name,last_name,status,payout_email,tokens\nx1,jo@example.com,Jo,Doe,active,jo-pay@example.com,jo jo-alt\nx2,bad,No,Mail,active,,\n';
      const conversions_csv =
        'id,affiliate_id,customer_id,customer_email,amount,currency,occurred_at,commission_amount,commission_status\no1,x1,cus_a,a@example.com,120.50,EUR,2024-05-01T10:00:00Z,12.05,paid\no2,x1,cus_a,,abc,EUR,2024-05-02T10:00:00Z,1,approved\n';
      const started = await imports.service.create(org.id, {
        source: 'csv',
        credentials: { affiliates_csv, conversions_csv },
        program_id: programId,
        dry_run: false,
      });
      const done = await finished(org.id, started.id);
      expect(done.status, done.error ?? '').toBe('succeeded');
      expect(done.counts.affiliates).toEqual({ created: 1, already_present: 0, skipped: 1 });
      expect(done.counts.commissions).toEqual({ created: 1, already_present: 0, skipped: 1 });
      expect(done.skipped).toEqual(
        expect.arrayContaining([
          { kind: 'commissions', source_id: 'o2', reason: 'amount "abc" is not a decimal number' },
        ]),
      );
      const conversion = (await org.api.get('/api/conversions')).body.data.conversions[0];
      expect(conversion).toMatchObject({
        external_id: 'o1',
        amount: 120.5,
        currency: 'EUR',
        occurred_at: '2024-05-01T10:00:00.000Z',
      });
      const commission = (await org.api.get('/api/commissions')).body.data.commissions[0];
      expect(commission).toMatchObject({ amount: 12.05, currency: 'EUR', status: 'paid' });
      const click = await org.api.post('/api/clicks', { ref: 'jo-alt' });
      expect(click.status).toBe(201);
    },
  );

  it('a CSV row holding a lone surrogate or a NUL is skipped, naming its field; the import goes on', async () => {
    const { org, programId } = await program();
    const affiliates_csv = [
      'id,email,first_name,last_name,status,payout_email,tokens',
      'x1,ok@example.com,Oki,Doe,active,,oki',
      'x2,ana@example.com,Ana\uD800,Doe,active,,ana',
      'x3,nul\u0000@example.com,Nul,Doe,active,,nul',
      'x\uDC00,odd@example.com,Odd,Doe,act\uD83Dive,,odd',
    ].join('\n');
    const conversions_csv = [
      'id,affiliate_id,customer_id,customer_email,amount,currency,occurred_at,commission_amount,commission_status',
      'o1,x1,cus_1,c1@example.com,10.00,EUR,2024-05-01T10:00:00Z,1.00,approved',
      'o2,x1,cus_2,c2\uDFFF@example.com,20.00,EUR,2024-05-02T10:00:00Z,2.00,approved',
    ].join('\n');
    // Through the service: the API's edge refuses such text in a request body with 400 before any
    // import begins; the writer's own check is what a source's API rows meet.
    const started = await imports.service.create(org.id, {
      source: 'csv',
      credentials: { affiliates_csv, conversions_csv },
      program_id: programId,
      dry_run: false,
    });
    const done = await finished(org.id, started.id);
    expect(done.status, done.error ?? '').toBe('succeeded');
    expect(done.error).toBeNull();
    expect(done.counts.affiliates).toEqual({ created: 1, already_present: 0, skipped: 3 });
    expect(done.counts.commissions).toEqual({ created: 1, already_present: 0, skipped: 1 });
    expect(done.skipped).toEqual([
      {
        kind: 'affiliates',
        source_id: 'x\\uDC00',
        reason: 'status "act\\uD83Dive" is not active, pending or disabled',
      },
      {
        kind: 'affiliates',
        source_id: 'x2',
        reason: 'text that cannot be stored: name holds a lone UTF-16 surrogate (\\uD800)',
      },
      {
        kind: 'affiliates',
        source_id: 'x3',
        reason: 'text that cannot be stored: email holds a NUL character (\\u0000)',
      },
      {
        kind: 'commissions',
        source_id: 'o2',
        reason: 'text that cannot be stored: sale.customer.email holds a lone UTF-16 surrogate (\\uDFFF)',
      },
    ]);
    expect((await org.api.get('/api/affiliates')).body.data.affiliates.map((a: any) => a.email)).toEqual([
      'ok@example.com',
    ]);
    expect((await org.api.get('/api/conversions')).body.data.conversions.map((c: any) => c.external_id)).toEqual([
      'o1',
    ]);
  });
});
