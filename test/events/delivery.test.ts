import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { OUTBOUND_EVENT_TYPES } from '@affiliate-attribution/contract';
import { Receiver, until } from './support/receiver.js';
import { merchant, startEventsApp, type EventsApp } from './support/app.js';
import { sql } from 'kysely';
import { EVENTS_WRITTEN, batchEventsSql, batchedEventsOf } from '../../server/src/modules/events/outbox.js';
import { kyselyOf } from '../../server/src/db/database.js';

/**
 * Outbound events end to end on a real database: the API, the outbox written with the change, the
 * relay and the pg-boss workers, and a real HTTP receiver verifying with `standardwebhooks`.
 */
describe('outbound events', () => {
  let app: EventsApp;
  const receivers: Receiver[] = [];
  const receiver = async () => {
    const r = await new Receiver().start();
    receivers.push(r);
    return r;
  };

  beforeAll(async () => {
    app = await startEventsApp({ retryDelaysMs: [300, 300, 300], timeoutMs: 1_000, jitter: 0 });
  }, 60_000);
  afterAll(async () => {
    for (const r of receivers) await r.stop();
    await app?.stop();
  });

  const subscribe = async (
    m: Awaited<ReturnType<typeof merchant>>,
    url: string,
    events: string[] = [...OUTBOUND_EVENT_TYPES],
  ) => {
    const res = await m.api('POST', '/api/webhook-endpoints', { url, events, description: 'test' });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.data as { webhook_endpoint: { id: string }; secret: string };
  };

  it('signs every delivery: a receiver with the secret verifies it, one with another secret rejects it', async () => {
    const m = await merchant(app.baseUrl);
    const r = await receiver();
    const created = await subscribe(m, r.url, ['conversion.created', 'commission.created']);
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    r.secret = created.secret;

    const conversion = await m.api('POST', '/api/conversions', { external_id: 'sig-1', amount: 100, ref: m.slug });
    expect(conversion.status).toBe(201);
    await until(() => r.received.length >= 2, 15_000, 'two events');
    expect(r.received.every((x) => x.verified === true)).toBe(true);
    const byType = Object.fromEntries(r.events().map((e) => [e.type, e]));
    // The resource exactly as the REST API returns it.
    const got = await m.api('GET', `/api/conversions/${conversion.body.data.conversion.id}`);
    expect(byType['conversion.created'].data.conversion).toEqual(got.body.data.conversion);
    const entry = (await m.api('GET', `/api/commissions?type=sale`)).body.data.commissions[0];
    expect(byType['commission.created'].data.commission).toEqual(entry);
    expect(typeof byType['conversion.created'].timestamp).toBe('string');

    const other = new Webhook(`whsec_${Buffer.alloc(32, 7).toString('base64')}`);
    for (const x of r.received) expect(() => other.verify(x.body, x.headers as Record<string, string>)).toThrow();
    // A body changed in transit fails with the right secret too.
    expect(() =>
      new Webhook(created.secret).verify(
        r.received[0].body.replace('"type"', '"typo"'),
        r.received[0].headers as Record<string, string>,
      ),
    ).toThrow();
  });

  it('answers the secret once, and keeps it encrypted at rest', async () => {
    const m = await merchant(app.baseUrl);
    const created = await subscribe(m, 'http://127.0.0.1:9/never');
    const got = await m.api('GET', `/api/webhook-endpoints/${created.webhook_endpoint.id}`);
    expect(JSON.stringify(got.body)).not.toContain('whsec_');
    const listed = await m.api('GET', '/api/webhook-endpoints');
    expect(JSON.stringify(listed.body)).not.toContain('whsec_');
    const stored = await app.db.orm.em
      .getConnection()
      .execute(`select secret from webhook_endpoints where id = ?`, [created.webhook_endpoint.id]);
    expect(stored[0].secret).toMatch(/^enc:v1:/);
    expect(stored[0].secret).not.toContain(created.secret.slice(6, 20));
  });

  it('500, 500, 200: three attempts with the same webhook-id, then succeeded', async () => {
    const m = await merchant(app.baseUrl);
    const r = await receiver();
    r.answer = (_req, i) => (i < 2 ? 500 : 200);
    const created = await subscribe(m, r.url, ['conversion.created']);
    r.secret = created.secret;
    await m.api('POST', '/api/conversions', { external_id: 'retry-1', amount: 10, ref: m.slug });
    await until(() => r.received.length >= 3, 20_000, 'three attempts');
    const ids = new Set(r.received.map((x) => x.headers['webhook-id']));
    expect(ids.size).toBe(1);
    expect([...ids][0]).toMatch(/^msg_[0-9a-f]{32}$/);
    expect(r.received.every((x) => x.verified === true)).toBe(true);
    const log = await until(
      async () => {
        const res = await m.api('GET', `/api/webhook-endpoints/${created.webhook_endpoint.id}/deliveries`);
        const d = res.body.data.deliveries[0];
        return d?.status === 'succeeded' ? d : undefined;
      },
      10_000,
      'the delivery recorded as succeeded',
    );
    expect(log).toMatchObject({
      attempts: 3,
      last_response_status: 200,
      event_type: 'conversion.created',
      event_id: [...ids][0],
      next_attempt_at: null,
    });
    expect(log.last_response_body).toBe('ok 200');
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(r.received).toHaveLength(3);
  });

  it('cuts a hanging receiver at the timeout and retries', async () => {
    const m = await merchant(app.baseUrl);
    const r = await receiver();
    r.answer = (_req, i) => (i === 0 ? 'hang' : 200);
    const created = await subscribe(m, r.url, ['conversion.created']);
    r.secret = created.secret;
    await m.api('POST', '/api/conversions', { external_id: 'hang-1', amount: 10, ref: m.slug });
    await until(() => r.received.length >= 2, 20_000, 'the retry after the timeout');
    const [first, second] = r.received;
    expect(second.headers['webhook-id']).toBe(first.headers['webhook-id']);
    // Cut at 1 s (this test's timeout), retried 300 ms later.
    expect(second.at - first.at).toBeGreaterThanOrEqual(1_000);
    expect(second.at - first.at).toBeLessThan(5_000);
  });

  it('records the answer of a failing receiver, truncated to 1 KB, and retries by hand', async () => {
    const m = await merchant(app.baseUrl);
    const r = await receiver();
    r.answer = () => 503;
    r.responseBody = `${'é'.repeat(600)}tail`;
    const created = await subscribe(m, r.url, ['conversion.created']);
    await m.api('POST', '/api/conversions', { external_id: 'fail-1', amount: 10, ref: m.slug });
    const endpoint = created.webhook_endpoint.id;
    const failed = await until(
      async () => {
        const d = (await m.api('GET', `/api/webhook-endpoints/${endpoint}/deliveries?status=failed`)).body.data
          .deliveries[0];
        return d;
      },
      20_000,
      'the delivery to fail for good',
    );
    expect(failed).toMatchObject({ attempts: 4, last_response_status: 503, next_attempt_at: null });
    expect(Buffer.byteLength(failed.last_response_body)).toBeLessThanOrEqual(1024);
    expect(failed.last_response_body.startsWith('éé')).toBe(true);
    expect(failed.last_response_body).not.toContain('tail');
    r.responseBody = undefined;
    expect(r.received).toHaveLength(4);
    const stillEnabled = await m.api('GET', `/api/webhook-endpoints/${endpoint}`);
    expect(stillEnabled.body.data.webhook_endpoint.enabled).toBe(true);

    r.answer = () => 204;
    const retried = await m.api('POST', `/api/webhook-deliveries/${failed.id}/retry`, {});
    expect(retried.status).toBe(202);
    await until(() => r.received.length >= 5, 10_000, 'the manual retry');
    expect(r.received[4].headers['webhook-id']).toBe(r.received[0].headers['webhook-id']);
  });

  it('a 410 answer disables the endpoint and says why', async () => {
    const m = await merchant(app.baseUrl);
    const r = await receiver();
    r.answer = () => 410;
    const created = await subscribe(m, r.url, ['conversion.created']);
    await m.api('POST', '/api/conversions', { external_id: 'gone-1', amount: 10, ref: m.slug });
    const endpoint = await until(
      async () => {
        const e = (await m.api('GET', `/api/webhook-endpoints/${created.webhook_endpoint.id}`)).body.data
          .webhook_endpoint;
        return e.enabled ? undefined : e;
      },
      15_000,
      'the endpoint disabled',
    );
    expect(endpoint.disabled_reason).toBe('The endpoint answered 410 Gone');
    expect(r.received).toHaveLength(1);
    const retried = await m.api(
      'POST',
      `/api/webhook-deliveries/${(await m.api('GET', `/api/webhook-endpoints/${created.webhook_endpoint.id}/deliveries`)).body.data.deliveries[0].id}/retry`,
      {},
    );
    expect(retried.status).toBe(409);
    const enabled = await m.api('PATCH', `/api/webhook-endpoints/${created.webhook_endpoint.id}`, { enabled: true });
    expect(enabled.body.data.webhook_endpoint).toMatchObject({ enabled: true, disabled_reason: null });
  });

  it('rotating the secret signs with the new and the old one for 24 hours', async () => {
    const m = await merchant(app.baseUrl);
    const r = await receiver();
    const created = await subscribe(m, r.url, ['conversion.created']);
    const rotated = await m.api('POST', `/api/webhook-endpoints/${created.webhook_endpoint.id}/rotate-secret`, {});
    expect(rotated.status).toBe(200);
    expect(rotated.body.data.secret).not.toBe(created.secret);
    const until24h = Date.parse(rotated.body.data.webhook_endpoint.previous_secret_expires_at) - Date.now();
    expect(until24h).toBeGreaterThan(23.9 * 3600_000);
    await m.api('POST', '/api/conversions', { external_id: 'rot-1', amount: 10, ref: m.slug });
    await until(() => r.received.length >= 1, 15_000, 'an event');
    const got = r.received[0];
    expect(String(got.headers['webhook-signature']).split(' ')).toHaveLength(2);
    for (const secret of [created.secret, rotated.body.data.secret]) {
      expect(() => new Webhook(secret).verify(got.body, got.headers as Record<string, string>)).not.toThrow();
    }
  });

  it("another organization's endpoint is never visible, changeable or delivered to", async () => {
    const a = await merchant(app.baseUrl);
    const b = await merchant(app.baseUrl);
    const ra = await receiver();
    const rb = await receiver();
    const ea = await subscribe(a, ra.url);
    const eb = await subscribe(b, rb.url);
    const id = ea.webhook_endpoint.id;
    for (const [method, path, body] of [
      ['GET', `/api/webhook-endpoints/${id}`],
      ['PATCH', `/api/webhook-endpoints/${id}`, { url: rb.url }],
      ['DELETE', `/api/webhook-endpoints/${id}`],
      ['POST', `/api/webhook-endpoints/${id}/rotate-secret`, {}],
      ['GET', `/api/webhook-endpoints/${id}/deliveries`],
    ] as const) {
      const res = await b.api(method, path, body);
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(JSON.stringify(res.body)).not.toContain(ra.url);
    }
    const listed = await b.api('GET', '/api/webhook-endpoints');
    expect(listed.body.data.webhook_endpoints.map((e: { id: string }) => e.id)).toEqual([eb.webhook_endpoint.id]);

    await a.api('POST', '/api/conversions', { external_id: 'tenant-a', amount: 10, ref: a.slug });
    await b.api('POST', '/api/conversions', { external_id: 'tenant-b', amount: 10, ref: b.slug });
    await until(() => ra.received.length >= 2 && rb.received.length >= 2, 15_000, 'both organizations’ events');
    const conversionsOf = (r: Receiver) =>
      r
        .events()
        .filter((e) => e.type === 'conversion.created')
        .map((e) => e.data.conversion.external_id);
    expect(conversionsOf(ra)).toEqual(['tenant-a']);
    expect(conversionsOf(rb)).toEqual(['tenant-b']);
    const delivery = (await a.api('GET', `/api/webhook-endpoints/${id}/deliveries`)).body.data.deliveries[0];
    expect((await b.api('POST', `/api/webhook-deliveries/${delivery.id}/retry`, {})).status).toBe(403);
  });

  it('an event only for a change that committed: a repeat or a refused change writes none', async () => {
    const m = await merchant(app.baseUrl);
    await subscribe(m, 'http://127.0.0.1:9/x', ['conversion.created', 'conversion.refunded']);
    const first = await m.api('POST', '/api/conversions', { external_id: 'once-1', amount: 10, ref: m.slug });
    const repeat = await m.api('POST', '/api/conversions', { external_id: 'once-1', amount: 10, ref: m.slug });
    expect([first.status, repeat.status, repeat.body.deduped]).toEqual([201, 200, true]);
    const refused = await m.api('POST', '/api/conversions/once-1/refund', { amount: 50 });
    expect(refused.status).toBe(400);
    const rows = await app.db.orm.em
      .getConnection()
      .execute(`select type, count(*)::int as n from ${EVENTS_WRITTEN} w where organization_id = ? group by type`, [
        m.organizationId,
      ]);
    expect(rows).toEqual([{ type: 'conversion.created', n: 1 }]);
  });

  it("a batched statement (one organization's rows: the batchers group by organization) writes that organization's events when subscribed, and no other's", async () => {
    const a = await merchant(app.baseUrl);
    const b = await merchant(app.baseUrl);
    await subscribe(a, 'http://127.0.0.1:9/x', ['conversion.created', 'commission.created']);
    await subscribe(b, 'http://127.0.0.1:9/x', ['commission.created']);
    for (const [m, id] of [
      [a, 'mix-a'],
      [b, 'mix-b'],
    ] as const) {
      expect((await m.api('POST', '/api/conversions', { external_id: id, amount: 10, ref: m.slug })).status).toBe(201);
    }
    const db = app.db.orm.em.getConnection();
    const written = async () =>
      Object.fromEntries(
        (
          await db.execute<{ organization_id: string; type: string; n: number }[]>(
            `select organization_id, type, count(*)::int as n from ${EVENTS_WRITTEN} w where organization_id in (?, ?) group by 1, 2`,
            [a.organizationId, b.organizationId],
          )
        ).map((r) => [`${r.organization_id === a.organizationId ? 'a' : 'b'} ${r.type}`, r.n]),
      );
    expect(await written()).toEqual({
      'a conversion.created': 1,
      'a commission.created': 1,
      'b commission.created': 1,
    });
    // The outbox CTE of the hot statements, once per organization, as the batchers send them.
    for (const m of [a, b])
      await db.execute(
        `with inserted as (select * from conversions where organization_id = ?),
        sale_entries as (select * from commissions where organization_id = ?),
        outbox as (${batchedEventsOf(
          [
            ['conversion.created', 'inserted'],
            ['commission.created', 'sale_entries'],
          ],
          `'${m.organizationId}'::uuid`,
        )})
        select 1`,
        [m.organizationId, m.organizationId],
      );
    expect(await written()).toEqual({
      'a conversion.created': 2,
      'a commission.created': 2,
      'b commission.created': 2,
    });
  });

  it('a batched event carries the row as its statement wrote it, not as it is when the relay expands it', async () => {
    const m = await merchant(app.baseUrl);
    await subscribe(m, 'http://127.0.0.1:9/x', ['conversion.created']);
    const conversion = (await m.api('POST', '/api/conversions', { external_id: 'snap-1', amount: 40, ref: m.slug }))
      .body.data.conversion;
    const rollback = new Error('rolled back');
    await expect(
      kyselyOf(app.db.orm)
        .transaction()
        .execute(async (trx) => {
          // The hot statements' outbox write (in this transaction: no relay sees the batch), then a later change of the row.
          await sql
            .raw(
              `with inserted as (select * from conversions where id = '${conversion.id}'),
            outbox as (${batchedEventsOf([['conversion.created', 'inserted']], `'${m.organizationId}'::uuid`)}) select 1`,
            )
            .execute(trx);
          await sql`update conversions set status = 'reversed', refunded_amount = amount, reversed_at = now() where id = ${conversion.id}`.execute(
            trx,
          );
          const events = (
            await sql<{
              status: string;
              refunded: string;
            }>`select e.resource ->> 'status' as status, e.resource ->> 'refunded_amount' as refunded
              from (${sql.raw(batchEventsSql(`(select * from outbound_event_batches where organization_id = '${m.organizationId}' and created_at >= now())`))}) e`.execute(
              trx,
            )
          ).rows;
          expect(events).toEqual([{ status: 'approved', refunded: '0' }]);
          throw rollback;
        }),
    ).rejects.toBe(rollback);
  });

  it('a migration that rewrites a batched table runs while batches are pending, and they keep their events as written', async () => {
    const m = await merchant(app.baseUrl);
    await subscribe(m, 'http://127.0.0.1:9/x', ['conversion.created']);
    const conversion = (await m.api('POST', '/api/conversions', { external_id: 'mig-1', amount: 12, ref: m.slug })).body
      .data.conversion;
    const rollback = new Error('rolled back');
    await expect(
      kyselyOf(app.db.orm)
        .transaction()
        .execute(async (trx) => {
          // A batch still pending when the migration runs (written in this transaction: no relay sees it).
          await sql
            .raw(
              `with inserted as (select * from conversions where id = '${conversion.id}'),
            outbox as (${batchedEventsOf([['conversion.created', 'inserted']], `'${m.organizationId}'::uuid`)}) select 1`,
            )
            .execute(trx);
          // What PostgreSQL refused while a batch column had the conversions' row type (the former migration 20261231800000).
          await sql.raw(`alter table conversions add column migration_note text not null default 'x'`).execute(trx);
          const events = (
            await sql<{
              type: string;
              id: string;
              note: string | null;
            }>`select e.type, e.resource ->> 'id' as id, e.resource ->> 'migration_note' as note
              from (${sql.raw(batchEventsSql(`(select * from outbound_event_batches where organization_id = '${m.organizationId}' and created_at >= now())`))}) e`.execute(
              trx,
            )
          ).rows;
          // The event as the conversion was written, before the column existed.
          expect(events).toEqual([{ type: 'conversion.created', id: conversion.id, note: null }]);
          throw rollback;
        }),
    ).rejects.toBe(rollback);
  });

  it('writes no outbox row for an organization without a subscribed endpoint', async () => {
    const m = await merchant(app.baseUrl);
    await subscribe(m, 'http://127.0.0.1:9/x', ['payout.paid']);
    await m.api('POST', '/api/conversions', { external_id: 'quiet-1', amount: 10, ref: m.slug });
    const rows = await app.db.orm.em
      .getConnection()
      .execute(`select count(*)::int as n from ${EVENTS_WRITTEN} w where organization_id = ?`, [m.organizationId]);
    expect(rows[0].n).toBe(0);
  });
});

describe('an endpoint failing for the whole window', () => {
  let app: EventsApp;
  let r: Receiver;
  beforeAll(async () => {
    // The 3 days of production shortened to 1 s; retries every 300 ms.
    app = await startEventsApp({
      retryDelaysMs: Array(20).fill(300),
      timeoutMs: 1_000,
      jitter: 0,
      disableAfterFailingMs: 1_000,
    });
    r = await new Receiver().start();
  }, 60_000);
  afterAll(async () => {
    await r?.stop();
    await app?.stop();
  });

  it('is disabled, and says why; its pending delivery fails', async () => {
    const m = await merchant(app.baseUrl);
    r.answer = () => 500;
    const created = await m.api('POST', '/api/webhook-endpoints', { url: r.url, events: ['conversion.created'] });
    await m.api('POST', '/api/conversions', { external_id: 'down-1', amount: 10, ref: m.slug });
    const endpoint = await until(
      async () => {
        const e = (await m.api('GET', `/api/webhook-endpoints/${created.body.data.webhook_endpoint.id}`)).body.data
          .webhook_endpoint;
        return e.enabled ? undefined : e;
      },
      20_000,
      'the endpoint disabled',
    );
    expect(endpoint.disabled_reason).toBe('Every delivery failed for 3 days');
    const attempts = r.received.length;
    expect(attempts).toBeGreaterThanOrEqual(2);
    const delivery = await until(
      async () => {
        const d = (await m.api('GET', `/api/webhook-endpoints/${endpoint.id}/deliveries`)).body.data.deliveries[0];
        return d?.status === 'failed' ? d : undefined;
      },
      10_000,
      'the delivery failed',
    );
    expect(delivery).toMatchObject({
      next_attempt_at: null,
      last_response_status: 500,
      last_error: 'The endpoint is disabled',
      attempts,
    });
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(r.received.length).toBeLessThanOrEqual(attempts + 1);
  });
});
