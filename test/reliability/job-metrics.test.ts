import { Writable } from 'node:stream';
import type { AddressInfo } from 'node:net';
import { type Server, createServer } from 'node:http';
import type { PgBoss } from 'pg-boss';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createApp } from '../../server/src/app.js';
import { sql, type RawBuilder } from 'kysely';
import { poolOf } from '../../server/src/db/database.js';
import { Db } from '../../server/src/db/sql.js';
import { createLogger } from '../../server/src/http/logging.js';
import { Metrics } from '../../server/src/http/metrics.js';
import { startQueue } from '../../server/src/jobs/queue.js';
import { CLICK_RETENTION_QUEUE, startClickRetention } from '../../server/src/modules/clicks/click-retention.js';
import { isolatedTestServer, TEST_ADMIN_TOKEN, TEST_PUBLIC_BASE_URL, type TestServer } from '../support/server.js';
import { describeWithPostgres, waitFor } from './support/service.js';

const METRICS_TOKEN = 'job-metrics-token-0123456789abcdef';

/**
 * The background work on /metrics (http/operational-metrics.ts, docs/operations.md): each metric
 * appears, and moves when the state under it changes. On a database of its own, since the figures
 * are the whole database's, not one organization's.
 */
describeWithPostgres('metrics of the background work', () => {
  let server: TestServer;
  let url: string;
  let http: Server;
  let boss: PgBoss;
  let metrics: Metrics;
  let logger: ReturnType<typeof createLogger>;
  const lines: Record<string, any>[] = [];
  let organizationId: string;
  let affiliateId: string;
  let programId: string;

  const q = (text: string, values: unknown[] = []) => poolOf(server.db.orm).query(text, values);
  const scrape = async (): Promise<string> => {
    const res = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(res.status).toBe(200);
    return res.text();
  };
  /** The value of one series (exact labels, as prom-client writes them), or undefined when absent. */
  const value = (text: string, series: string): number | undefined => {
    const line = text.split('\n').find((l) => l.startsWith(`${series} `));
    return line === undefined ? undefined : Number(line.slice(series.length + 1));
  };
  const read = async (series: string) => value(await scrape(), series);
  /** Scrapes until `series` satisfies `ok` (the readings are cached for 1 s). */
  const until = async (series: string, ok: (v: number | undefined) => boolean, what: string) => {
    await waitFor(async () => ok(await read(series)), 30_000, what);
    return read(series);
  };

  beforeAll(async () => {
    server = await isolatedTestServer();
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(line));
        done();
      },
    });
    logger = createLogger('info', sink);
    metrics = new Metrics({ defaultMetrics: false });
    const app = createApp({
      orm: server.db.orm,
      logger,
      metrics,
      config: { ADMIN_TOKEN: TEST_ADMIN_TOKEN, PUBLIC_BASE_URL: TEST_PUBLIC_BASE_URL, METRICS_TOKEN } as never,
    });
    http = createServer(app.listener).listen(0, '127.0.0.1');
    await new Promise((resolve) => http.once('listening', resolve));
    url = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
    boss = await startQueue(server.db.orm, logger);

    const org = await fetch(`${url}/admin/organizations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Metrics' }),
    });
    const { data } = (await org.json()) as { data: { api_key: string; organization: { id: string } } };
    organizationId = data.organization.id;
    const post = async (path: string, body: unknown) =>
      (
        await (
          await fetch(`${url}${path}`, {
            method: 'POST',
            headers: { authorization: `Bearer ${data.api_key}`, 'content-type': 'application/json' },
            body: JSON.stringify(body),
          })
        ).json()
      ).data;
    programId = (await post('/api/programs', { name: 'Main', commission_value: 10 })).program.id;
    affiliateId = (
      await post('/api/affiliates', {
        email: 'metrics@example.com',
        program_id: programId,
        slug: `metrics-${Date.now()}`,
      })
    ).affiliate.id;
  });
  afterAll(async () => {
    await boss?.stop({ graceful: false, close: false });
    http?.close();
    await server?.db.stop();
  });

  it('answers every metric, the database-backed ones read on the scrape', async () => {
    const text = await scrape();
    expect(value(text, 'database_metrics_up')).toBe(1);
    expect(value(text, 'payouts_processing')).toBe(0);
    expect(value(text, 'payouts_processing_oldest_age_seconds')).toBe(0);
    expect(value(text, 'outbound_webhook_backlog{stage="outbox"}')).toBe(0);
    expect(value(text, 'outbound_webhook_backlog{stage="delivery"}')).toBe(0);
    expect(value(text, 'outbound_webhook_backlog_oldest_age_seconds{stage="delivery"}')).toBe(0);
    expect(value(text, 'database_pool_connections{state="max"}')).toBe(10);
    // The reading's own connection is out of the pool (or being opened) while the pool is read.
    expect(value(text, 'database_pool_connections{state="total"}')).toBeGreaterThanOrEqual(1);
    expect(value(text, 'database_pool_connections{state="total"}')).toBeLessThanOrEqual(10);
    expect(value(text, 'database_pool_connections{state="idle"}')).toBeGreaterThanOrEqual(0);
    expect(value(text, 'database_pool_connections{state="waiting"}')).toBeGreaterThanOrEqual(0);
    for (const name of [
      'job_queue_jobs',
      'job_queue_oldest_pending_age_seconds',
      'reports_unfolded_deltas',
      'job_failures_total',
    ]) {
      expect(text).toContain(`# HELP ${name} `);
    }
  });

  it('job queue: a waiting job, its age, a job failed for good and one waiting for its retry, per queue', async () => {
    await boss.createQueue('metrics-waiting');
    await boss.createQueue('metrics-failing', { retryLimit: 0 });
    await boss.createQueue('metrics-retrying', { retryLimit: 2, retryDelay: 600 });
    expect(
      await until('job_queue_jobs{queue="metrics-waiting",state="created"}', (v) => v !== undefined, 'the new queue'),
    ).toBe(0);
    await boss.send('metrics-waiting', {});
    await q(`update pgboss.job set start_after = now() - interval '10 minutes' where name = 'metrics-waiting'`);
    expect(
      await until('job_queue_jobs{queue="metrics-waiting",state="created"}', (v) => v === 1, 'a waiting job counted'),
    ).toBe(1);
    expect(await read('job_queue_oldest_pending_age_seconds{queue="metrics-waiting"}')).toBeGreaterThanOrEqual(600);

    await boss.send('metrics-failing', {});
    await boss.send('metrics-retrying', {});
    const fail = async () => {
      throw new Error('the job failed');
    };
    await boss.work('metrics-failing', { pollingIntervalSeconds: 0.5 }, fail);
    await boss.work('metrics-retrying', { pollingIntervalSeconds: 0.5 }, fail);
    expect(
      await until('job_queue_jobs{queue="metrics-failing",state="failed"}', (v) => v === 1, 'a failed job counted'),
    ).toBe(1);
    expect(
      await until('job_queue_jobs{queue="metrics-retrying",state="retry"}', (v) => v === 1, 'a retrying job counted'),
    ).toBe(1);
    expect(await read('job_queue_jobs{queue="metrics-retrying",state="failed"}')).toBe(0);
  });

  it('click retention: a failed run is logged as an error with the job and the reason, counted, and retried by pg-boss', async () => {
    expect(await read(`job_failures_total{queue="${CLICK_RETENTION_QUEUE}"}`)).toBeUndefined();
    // The run fails in PostgreSQL: its statements wait for a lock another transaction holds, past a lock_timeout.
    const holder = await poolOf(server.db.orm).connect();
    try {
      await holder.query('begin');
      await holder.query('lock table organizations in access exclusive mode');
      const query = <R>(statement: RawBuilder<R>) =>
        Db.of(server.db.orm).transaction(async (db) => {
          await db.rows(sql`set local lock_timeout = '100ms'`);
          return db.rows(statement);
        });
      await boss.createQueue(CLICK_RETENTION_QUEUE, { retryLimit: 3, retryDelay: 300, expireInSeconds: 30 * 60 });
      await boss.send(CLICK_RETENTION_QUEUE, {});
      await startClickRetention(boss, query, logger, metrics.jobFailed);
      expect(
        await until(`job_failures_total{queue="${CLICK_RETENTION_QUEUE}"}`, (v) => v === 1, 'the failure counted'),
      ).toBe(1);
    } finally {
      await holder.query('rollback');
      holder.release();
    }
    const failure = lines.find((l) => l.job === CLICK_RETENTION_QUEUE && l.level === 50);
    expect(failure).toMatchObject({
      msg: `job ${CLICK_RETENTION_QUEUE} failed: canceling statement due to lock timeout`,
      reason: 'canceling statement due to lock timeout',
      err: { code: '55P03' },
    });
    // pg-boss retries it (retryLimit 3): the job waits for its next attempt.
    expect(
      await until(
        `job_queue_jobs{queue="${CLICK_RETENTION_QUEUE}",state="retry"}`,
        (v) => v === 1,
        'the job waiting for its retry',
      ),
    ).toBe(1);
  });

  it('payouts stuck in processing: their count and the age of the oldest', async () => {
    await q(
      `insert into payouts (id, organization_id, affiliate_id, program_id, currency, amount, status, commission_count, method, send_key, sent_at)
       values (gen_random_uuid(), $1, $2, $3, 'USD', 10, 'processing', 1, 'paypal', 'metrics-send-key', now() - interval '2 hours')`,
      [organizationId, affiliateId, programId],
    );
    expect(await until('payouts_processing', (v) => v === 1, 'the stuck payout')).toBe(1);
    expect(await read('payouts_processing_oldest_age_seconds')).toBeGreaterThanOrEqual(7200);
  });

  it('the reports’ backlog: deltas due and not folded, not those whose due_at is ahead', async () => {
    const delta = (dueAt: string) =>
      q(
        `insert into report_deltas (organization_id, due_at, day, affiliate_id, program_id, currency, entries, clicks, customers, conversions,
           revenue, refunded, pending, approved, paid, reversed, rejected, on_hold)
         values ($1, ${dueAt}, current_date, $2, $3, '', 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)`,
        [organizationId, affiliateId, programId],
      );
    await delta(`'-infinity'`);
    await delta(`now() - interval '1 minute'`);
    await delta(`now() + interval '1 day'`);
    expect(await until('reports_unfolded_deltas', (v) => v === 2, 'the due deltas')).toBe(2);
  });

  it('the outbound webhook backlog: events in the outbox and deliveries pending, with the age of the oldest', async () => {
    await q(
      `insert into outbound_events (id, organization_id, type, resource, created_at) values (gen_random_uuid(), $1, 'conversion.created', '{}', now() - interval '5 minutes')`,
      [organizationId],
    );
    expect(await until('outbound_webhook_backlog{stage="outbox"}', (v) => v === 1, 'the undispatched event')).toBe(1);
    expect(await read('outbound_webhook_backlog_oldest_age_seconds{stage="outbox"}')).toBeGreaterThanOrEqual(300);

    const endpoint = (
      await q(
        `insert into webhook_endpoints (id, organization_id, url, events, secret) values (gen_random_uuid(), $1, 'https://example.com/hook', '{conversion.created}', 'secret') returning id`,
        [organizationId],
      )
    ).rows[0].id;
    const event = (
      await q(
        `insert into outbound_events (id, organization_id, type, resource, dispatched_at) values (gen_random_uuid(), $1, 'conversion.created', '{}', now()) returning id`,
        [organizationId],
      )
    ).rows[0].id;
    await q(
      `insert into webhook_deliveries (id, organization_id, endpoint_id, event_id, status, created_at) values (gen_random_uuid(), $1, $2, $3, 'pending', now() - interval '15 minutes')`,
      [organizationId, endpoint, event],
    );
    expect(await until('outbound_webhook_backlog{stage="delivery"}', (v) => v === 1, 'the pending delivery')).toBe(1);
    expect(await read('outbound_webhook_backlog_oldest_age_seconds{stage="delivery"}')).toBeGreaterThanOrEqual(900);
    await q(`update webhook_deliveries set status = 'succeeded' where endpoint_id = $1`, [endpoint]);
    expect(await until('outbound_webhook_backlog{stage="delivery"}', (v) => v === 0, 'the delivery done')).toBe(0);
  });
});
