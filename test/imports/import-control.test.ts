import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { Db } from '../../server/src/db/sql.js';
import { expectError, type Api } from '../support/api.js';
import { testServer } from '../support/server.js';
import { finished, merchant } from './import-helpers.js';
import { startToltStandin, type ToltData, type ToltStandin } from './tolt-standin.js';
import { sql } from 'kysely';

/**
 * What keeps one organization's import from harming another's, or its owner: a credential that
 * cannot be sent fails at once and is quoted nowhere; organizations' imports run side by side (one
 * hanging at its source holds back no other); a queued or running import can be cancelled,
 * keeping exactly what it wrote; a source row with text PostgreSQL cannot store is skipped with its
 * reason (a CSV cannot carry such text through the API, whose edge refuses it with 400:
 * import-jobs.test.ts writes one through the service). Sources: Tolt's documented API (tolt-standin.ts, https://docs.tolt.com/introduction) and
 * the CSV of docs/imports.md, through the app's own runner (the service's defaults).
 */
const KEY = 'tlt_live_control0123';
const PROGRAM = 'prg_control';
const partner = (id: string, email: string, first: string) => ({
  id,
  email,
  first_name: first,
  last_name: 'Example',
  payout_details: { email: null },
  program_id: PROGRAM,
  created_at: '2025-01-13T10:06:11.251Z',
});
const DATA: ToltData = {
  partners: [
    partner('part_a', 'ann@example.com', 'Ann'),
    partner('part_b', 'ben@example.com', 'Ben'),
    partner('part_c', 'cid@example.com', 'Cid'),
  ],
  links: [],
  customers: [],
  commissions: [],
};
const AFFILIATES_HEADER = 'id,email,first_name,last_name,status,payout_email,tokens';

const standins: ToltStandin[] = [];
async function tolt(data: ToltData = DATA): Promise<ToltStandin> {
  const standin = await startToltStandin(KEY, PROGRAM, data);
  standins.push(standin);
  // Read when an import's job starts (config.ts through the runner).
  process.env.IMPORT_TOLT_API_BASE_URL = standin.url;
  return standin;
}
afterEach(async () => {
  for (const s of standins.splice(0)) await s.close();
});
afterAll(() => {
  delete process.env.IMPORT_TOLT_API_BASE_URL;
});

async function start(
  api: Api,
  programId: string,
  source: string,
  credentials: Record<string, string>,
  dryRun = false,
): Promise<string> {
  const res = await api.post('/api/imports', { source, credentials, program_id: programId, dry_run: dryRun });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  return res.body.data.import.id;
}

async function until<T>(read: () => Promise<T>, ok: (value: T) => boolean, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (ok(value)) return value;
    if (Date.now() > end) throw new Error(`not reached in ${ms} ms: ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const importOf = async (api: Api, id: string) => (await api.get(`/api/imports/${id}`)).body.data.import;

describe('an import credential that cannot be sent', () => {
  it('a Tolt API key with a line break fails the import at once, with no request and no retry, and no stored or returned text holds the key', async () => {
    const standin = await tolt();
    const m = await merchant();
    const key = 'tlt_live_LEAKYhead0123\nLEAKYtail4567';
    const began = Date.now();
    const id = await start(m.api, m.programId, 'tolt', { api_key: key, program_id: PROGRAM });
    const done = await finished(m.api, id);
    expect(Date.now() - began).toBeLessThan(5_000);
    expect(done.status).toBe('failed');
    expect(done.error).toBe(
      'The API key contains characters that cannot be sent in an HTTP header (a line break, or a character outside Latin-1): copy it again from Tolt, without spaces or line breaks. Nothing was imported.',
    );
    expect(done.progress.retry).toBeNull();
    expect(standin.requests).toEqual([]);
    const { db } = await testServer();
    const stored = await Db.of(db.orm).one(
      sql<Record<string, unknown>>`select error, progress, skipped, sealed_credentials from imports where id = ${id}`,
    );
    expect(stored?.sealed_credentials).toBeNull();
    const listed = await m.api.get('/api/imports');
    for (const text of [JSON.stringify(stored), JSON.stringify(done), JSON.stringify(listed.body)]) {
      expect(text).not.toContain('LEAKYhead');
      expect(text).not.toContain('LEAKYtail');
    }
  });
});

describe('organizations do not wait on one another', () => {
  it(
    "an organization's import hanging at its source holds back no other: another's one-row CSV completes within seconds, and the hanging one is cancelled at once",
    { timeout: 30_000 },
    async () => {
      const standin = await tolt();
      standin.hold = (url) => url.pathname === '/v1/partners';
      const a = await merchant();
      const b = await merchant();
      const stuck = await start(a.api, a.programId, 'tolt', { api_key: KEY, program_id: PROGRAM });
      await until(
        async () => standin.held(),
        (n) => n === 1,
      );

      const began = Date.now();
      const csv = await start(b.api, b.programId, 'csv', {
        affiliates_csv: `${AFFILIATES_HEADER}\nr1,rae@example.com,Rae,Doe,active,,rae\n`,
      });
      const done = await until(
        () => importOf(b.api, csv),
        (i) => i.status !== 'running',
        5_000,
      );
      expect(Date.now() - began).toBeLessThan(5_000);
      expect(done.status).toBe('succeeded');
      expect(done.counts.affiliates).toEqual({ created: 1, already_present: 0, skipped: 0 });
      expect((await importOf(a.api, stuck)).status).toBe('running');

      const cancelled = await a.api.post(`/api/imports/${stuck}/cancel`);
      expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
      expect(cancelled.body.data.import).toMatchObject({
        id: stuck,
        status: 'cancelled',
        error: null,
        progress: { retry: null },
      });
      expect(cancelled.body.data.import.finished_at).not.toBeNull();
      // Its job let go of the request in flight and wrote nothing, even once the source answers.
      standin.release();
      await new Promise((r) => setTimeout(r, 1_000));
      expect(await importOf(a.api, stuck)).toMatchObject({ status: 'cancelled', error: null, progress: { pages: 0 } });
      expect((await a.api.get('/api/affiliates')).body.data.affiliates).toEqual([]);
    },
  );
});

describe('cancel', () => {
  it(
    'cancels a running import between pages and a queued one behind it: what was written stays, counted, and undo removes it; cancelling an ended import is 409',
    { timeout: 30_000 },
    async () => {
      const standin = await tolt();
      // Page 1 (two partners) answers; page 2 hangs.
      standin.hold = (url) => url.pathname === '/v1/partners' && url.searchParams.has('starting_after');
      const m = await merchant();
      const running = await start(m.api, m.programId, 'tolt', { api_key: KEY, program_id: PROGRAM });
      await until(
        async () => standin.held(),
        (n) => n === 1,
      );
      const written = await importOf(m.api, running);
      expect(written.counts.affiliates).toEqual({ created: 2, already_present: 0, skipped: 0 });

      // The same organization's next import waits for the first (one at a time per organization).
      const queued = await start(m.api, m.programId, 'csv', {
        affiliates_csv: `${AFFILIATES_HEADER}\nq1,queued@example.com,Queued,Doe,active,,queued\n`,
      });
      await new Promise((r) => setTimeout(r, 1_000));
      expect(await importOf(m.api, queued)).toMatchObject({
        status: 'running',
        progress: { phase: 'queued', pages: 0, retry: null },
      });
      const cancelQueued = await m.api.post(`/api/imports/${queued}/cancel`);
      expect(cancelQueued.status).toBe(200);
      expect(cancelQueued.body.data.import).toMatchObject({
        status: 'cancelled',
        counts: { affiliates: { created: 0, already_present: 0, skipped: 0 } },
      });

      const cancelRunning = await m.api.post(`/api/imports/${running}/cancel`);
      expect(cancelRunning.status).toBe(200);
      expect(cancelRunning.body.data.import).toMatchObject({
        status: 'cancelled',
        progress: { phase: 'affiliates', pages: 1 },
        counts: { affiliates: { created: 2, already_present: 0, skipped: 0 } },
      });
      standin.release();
      await new Promise((r) => setTimeout(r, 1_500));

      // Neither job wrote anything more: the cancelled one stopped, the queued one never began.
      const after = await importOf(m.api, running);
      expect(after).toMatchObject({
        status: 'cancelled',
        counts: written.counts,
        progress: { phase: 'affiliates', pages: 1, retry: null },
      });
      const emails = (await m.api.get('/api/affiliates')).body.data.affiliates.map((a: any) => a.email).sort();
      expect(emails).toEqual(['ann@example.com', 'ben@example.com']);
      expect((await importOf(m.api, queued)).status).toBe('cancelled');

      expectError(
        await m.api.post(`/api/imports/${running}/cancel`),
        409,
        'The import was already cancelled: only a running import can be cancelled',
      );
      const csv = await start(m.api, m.programId, 'csv', {
        affiliates_csv: `${AFFILIATES_HEADER}\nd1,done@example.com,Done,Doe,active,,done\n`,
      });
      expect((await finished(m.api, csv)).status).toBe('succeeded');
      expectError(
        await m.api.post(`/api/imports/${csv}/cancel`),
        409,
        'The import has already succeeded: only a running import can be cancelled',
      );
      expectError(
        await m.api.post(`/api/imports/00000000-0000-4000-8000-000000000000/cancel`),
        404,
        'Import not found',
      );

      const undone = await m.api.delete(`/api/imports/${running}`);
      expect(undone.status, JSON.stringify(undone.body)).toBe(200);
      expect((await m.api.get('/api/affiliates')).body.data.affiliates.map((a: any) => a.email)).toEqual([
        'done@example.com',
      ]);
    },
  );
});

describe('text PostgreSQL cannot store', () => {
  it('a Tolt partner, customer or commission holding a lone surrogate or a NUL is skipped, naming its field; the rest is imported', async () => {
    await tolt({
      partners: [partner('part_ok', 'ok@example.com', 'Oki'), partner('part_bad', 'bad@example.com', 'Ba\uDBFFd')],
      links: [],
      customers: [
        {
          id: 'cust_1',
          customer_id: 'cus_1',
          email: 'c@example.com',
          name: 'Nul\u0000Name',
          partner_id: 'part_ok',
          program_id: PROGRAM,
        },
      ],
      commissions: [
        {
          id: 'comm_1',
          amount: '100',
          revenue: '500',
          currency: 'usd',
          status: 'approved',
          partner_id: 'part_ok',
          customer_id: 'cust_1',
          transaction_id: 'txn_1',
          created_at: '2025-03-01T12:00:00.000Z',
        },
      ],
    });
    const m = await merchant();
    const id = await start(m.api, m.programId, 'tolt', { api_key: KEY, program_id: PROGRAM });
    const done = await finished(m.api, id);
    expect(done.status, done.error).toBe('succeeded');
    expect(done.counts.affiliates).toEqual({ created: 1, already_present: 0, skipped: 1 });
    expect(done.counts.customers).toEqual({ created: 0, already_present: 0, skipped: 1 });
    expect(done.counts.commissions).toEqual({ created: 0, already_present: 0, skipped: 1 });
    expect(done.skipped).toEqual([
      {
        kind: 'affiliates',
        source_id: 'part_bad',
        reason: 'text that cannot be stored: name holds a lone UTF-16 surrogate (\\uDBFF)',
      },
      {
        kind: 'customers',
        source_id: 'cus_1',
        reason: 'text that cannot be stored: name holds a NUL character (\\u0000)',
      },
      {
        kind: 'commissions',
        source_id: 'comm_1',
        reason: 'text that cannot be stored: sale.customer.name holds a NUL character (\\u0000)',
      },
    ]);
    expect((await m.api.get('/api/affiliates')).body.data.affiliates.map((a: any) => a.email)).toEqual([
      'ok@example.com',
    ]);
  });
});
