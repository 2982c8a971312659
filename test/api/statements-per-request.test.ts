import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMerchant } from '../support/api.js';

/**
 * The database statements each request costs, counted on pg's client (every statement of the
 * service goes through it: MikroORM's kysely, db/sql.ts, the stored statements), with the caches
 * warm (API key, slug, click, program rule). The hot paths must not gain a round trip. The job
 * queue's own statements (pg-boss's schema: a worker polling while another file's import or
 * delivery runs on this worker's server) are background work, not the request's, and not counted.
 */
const statements: string[] = [];
const query = pg.Client.prototype.query;

beforeAll(() => {
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const first = args[0] as string | { text: string };
    const text = typeof first === 'string' ? first : first.text;
    if (!/\bpgboss\./.test(text)) statements.push(text);
    return (query as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof query;
});
afterAll(() => {
  pg.Client.prototype.query = query;
});

/** The statements sent while `send` runs. */
async function counted(send: () => Promise<unknown>): Promise<string[]> {
  const from = statements.length;
  await send();
  return statements.slice(from);
}

describe('statements per request, caches warm', () => {
  it('POST /api/clicks: one insert', async () => {
    const m = await createMerchant();
    await m.api.post('/api/clicks', { ref: m.slug });
    for (let i = 0; i < 3; i++) {
      const sent = await counted(async () =>
        expect((await m.api.post('/api/clicks', { ref: m.slug })).status).toBe(201),
      );
      expect(sent, sent.join('\n')).toHaveLength(1);
    }
  });

  it('POST /api/customers: one insert; a repeat, the insert and one read', async () => {
    const m = await createMerchant();
    const cookie = (await m.api.post('/api/clicks', { ref: m.slug })).body.data.click.cookie_id;
    await m.api.post('/api/customers', { customer_id: 'warm', cookie_id: cookie });
    for (let i = 0; i < 3; i++) {
      const sent = await counted(async () =>
        expect((await m.api.post('/api/customers', { customer_id: `c${i}`, cookie_id: cookie })).status).toBe(201),
      );
      expect(sent, sent.join('\n')).toHaveLength(1);
    }
    const repeat = await counted(async () =>
      expect((await m.api.post('/api/customers', { customer_id: 'c0', cookie_id: cookie })).status).toBe(200),
    );
    expect(repeat, repeat.join('\n')).toHaveLength(2);
  });

  it('reads by id: one statement, the ownership rule included', async () => {
    const m = await createMerchant();
    await m.api.post('/api/customers', { customer_id: 'read-me', ref: m.slug });
    for (const path of [
      `/api/programs/${m.program.id}`,
      `/api/affiliates/${m.affiliate.id}`,
      '/api/customers/read-me',
    ]) {
      const sent = await counted(async () => expect((await m.api.get(path)).status).toBe(200));
      expect(sent, `${path}\n${sent.join('\n')}`).toHaveLength(1);
    }
  });

  it("POST /api/affiliates: the program check (which answers a repeat), then the partner's tax form taken under its lock, one insert and its link token; POST /api/programs: one insert", async () => {
    const m = await createMerchant();
    const created = await counted(async () =>
      expect((await m.api.post('/api/affiliates', { email: 'new@example.com', program_id: m.program.id })).status).toBe(
        201,
      ),
    );
    // A new membership starts with the partner's current tax form (modules/tax-forms/partner-form.ts):
    // begin, the per-partner lock (so that a decision on the form at the same moment is not missed:
    // the lock comes before the read's snapshot, hence statements of their own), the form, the
    // insert, the slug's entry in the organization's link tokens (one namespace held by the
    // database: modules/affiliates/link-tokens.ts, one statement), commit. Creating an affiliate
    // is not a hot path; the repeat below still costs one.
    expect(created, created.join('\n')).toHaveLength(7);
    expect(created.filter((sql) => /^(begin|commit)$/.test(sql))).toEqual(['begin', 'commit']);
    const repeat = await counted(async () =>
      expect((await m.api.post('/api/affiliates', { email: 'new@example.com', program_id: m.program.id })).status).toBe(
        200,
      ),
    );
    expect(repeat, repeat.join('\n')).toHaveLength(1);
    const program = await counted(async () =>
      expect((await m.api.post('/api/programs', { name: 'P', commission_value: 5 })).status).toBe(201),
    );
    expect(program, program.join('\n')).toHaveLength(1);
  });
});
