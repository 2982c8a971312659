import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { poolOf } from '../../server/src/db/database.js';
import { Db } from '../../server/src/db/sql.js';
import { RETENTION_CRON, RETENTION_QUEUE, pruneDelivered } from '../../server/src/modules/events/retention.js';
import { Receiver, until } from './support/receiver.js';
import { merchant, startEventsApp, type EventsApp } from './support/app.js';

/**
 * Retention: what was dispatched before the cut-off goes, with its finished deliveries, in
 * batches; what is newer, and an event whose delivery is still pending, stay.
 */
describe('retention of outbound events and deliveries', () => {
  let app: EventsApp;
  let receiver: Receiver;

  beforeAll(async () => {
    app = await startEventsApp({ retryDelaysMs: [600_000], jitter: 0, timeoutMs: 1_000 });
    receiver = await new Receiver().start();
  }, 60_000);
  afterAll(async () => {
    await receiver?.stop();
    await app?.stop();
  });

  it('is scheduled hourly in the job queue', async () => {
    const { rows } = await poolOf(app.db.orm).query(`select name, cron from pgboss.schedule where name = $1`, [
      RETENTION_QUEUE,
    ]);
    expect(rows).toEqual([{ name: RETENTION_QUEUE, cron: RETENTION_CRON }]);
  });

  it('deletes old dispatched events and their finished deliveries in batches; keeps newer ones and any with a pending delivery', async () => {
    const m = await merchant(app.baseUrl);
    receiver.answer = (request) => (request.body.includes('"still-failing"') ? 500 : 204);
    const created = await m.api('POST', '/api/webhook-endpoints', {
      url: receiver.url,
      events: ['conversion.created'],
    });
    expect(created.status).toBe(201);
    const pool = poolOf(app.db.orm);
    for (const id of ['old-1', 'old-2', 'old-3', 'still-failing', 'recent']) {
      expect((await m.api('POST', '/api/conversions', { external_id: id, amount: 10, ref: m.slug })).status).toBe(201);
    }
    const state = async () =>
      (
        await pool.query<{ external_id: string; status: string | null }>(
          `select ev.resource ->> 'external_id' as external_id, d.status from outbound_events ev
           left join webhook_deliveries d on d.event_id = ev.id and d.organization_id = ev.organization_id where ev.organization_id = $1 order by 1`,
          [m.organizationId],
        )
      ).rows;
    await until(
      async () => {
        const rows = await state();
        return (
          rows.length === 5 &&
          rows.every((r) => (r.external_id === 'still-failing' ? r.status === 'pending' : r.status === 'succeeded')) &&
          rows
        );
      },
      20_000,
      'four deliveries succeeded and one failing (pending its retry)',
    );

    // Dispatched 40 days ago, all but the recent one.
    await pool.query(
      `update outbound_events set dispatched_at = now() - interval '40 days' where organization_id = $1 and resource ->> 'external_id' <> 'recent'`,
      [m.organizationId],
    );
    const cutoff = new Date(Date.now() - 30 * 24 * 60 * 60 * 1000);
    const pruned = await pruneDelivered((statement) => Db.of(app.db.orm).rows(statement), cutoff, { batch: 2 });
    expect(pruned).toEqual({ events: 3, deliveries: 3 });
    expect(await state()).toEqual([
      { external_id: 'recent', status: 'succeeded' },
      { external_id: 'still-failing', status: 'pending' },
    ]);
    // Once its delivery has finished (here: failed for good), the old event goes too.
    await pool.query(
      `update webhook_deliveries set status = 'failed' where organization_id = $1 and status = 'pending'`,
      [m.organizationId],
    );
    expect(await pruneDelivered((statement) => Db.of(app.db.orm).rows(statement), cutoff, { batch: 2 })).toEqual({
      events: 1,
      deliveries: 1,
    });
    expect(await state()).toEqual([{ external_id: 'recent', status: 'succeeded' }]);
  });
});
