import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import pino from 'pino';
import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler } from 'kysely';
import type { Tables } from '../../server/src/db/database.js';
import {
  CACHE_CHANGES_CHANNEL,
  CHANGE_LISTENER_APPLICATION_NAME,
  ChangeListener,
  changeNotification,
  parseChange,
  type CacheChange,
} from '../../server/src/db/change-notifications.js';
import { loadConfig } from '../../server/src/config.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { startFreezableProxy } from '../support/freezable-proxy.js';
import { describeWithPostgres, waitFor, withDatabase } from './support/service.js';

describe('parseChange', () => {
  it('reads the payloads notifyChange sends and ignores anything else', () => {
    expect(parseChange(JSON.stringify({ kind: 'program', id: 'p1' }))).toEqual({ kind: 'program', id: 'p1' });
    expect(parseChange(JSON.stringify({ kind: 'api_key', keyHash: 'h1' }))).toEqual({ kind: 'api_key', keyHash: 'h1' });
    for (const payload of [
      undefined,
      '',
      'not json',
      'null',
      '42',
      '{"kind":"program"}',
      '{"kind":"api_key","keyHash":1}',
      '{"kind":"other","id":"x"}',
    ]) {
      expect(parseChange(payload), String(payload)).toBeUndefined();
    }
  });
});

describe('configuration of the caches across instances (config.ts)', () => {
  it('keeps both TTLs as 5 s safety nets by default, up to 60 s', () => {
    const defaults = loadConfig({});
    expect([defaults.API_KEY_CACHE_TTL_MS, defaults.PROGRAM_RULE_CACHE_TTL_MS]).toEqual([5_000, 5_000]);
    expect(loadConfig({ PROGRAM_RULE_CACHE_TTL_MS: '60000' }).PROGRAM_RULE_CACHE_TTL_MS).toBe(60_000);
    expect(() => loadConfig({ PROGRAM_RULE_CACHE_TTL_MS: '60001' })).toThrow(/PROGRAM_RULE_CACHE_TTL_MS/);
  });

  it('refuses a listener URL without DATABASE_URL: the embedded database has no listener', () => {
    expect(() => loadConfig({ DATABASE_LISTEN_URL: 'postgres://db:5432/app' })).toThrow(
      /DATABASE_LISTEN_URL: requires DATABASE_URL/,
    );
    const both = loadConfig({
      DATABASE_URL: 'postgres://pgbouncer:6432/app',
      DATABASE_LISTEN_URL: 'postgres://db:5432/app',
    });
    expect(both.DATABASE_LISTEN_URL).toBe('postgres://db:5432/app');
  });
});

/**
 * The listener of db/change-notifications.ts on a real PostgreSQL (the embedded one accepts a
 * single connection, so no listener runs there): what it delivers, and that it comes back after
 * its connection is killed.
 */
describeWithPostgres('ChangeListener', () => {
  let db: TestDatabase;
  let listener: ChangeListener | undefined;
  const changes: CacheChange[] = [];
  let resets = 0;
  const logs: Record<string, unknown>[] = [];
  const logger = pino(
    { level: 'info' },
    { write: (line: string) => void logs.push(JSON.parse(line) as Record<string, unknown>) },
  );

  beforeAll(async () => {
    db = await createTestDatabase();
  }, 60_000);
  afterEach(async () => {
    await listener?.close();
    changes.length = 0;
    resets = 0;
    logs.length = 0;
  });
  afterAll(async () => {
    await db?.stop();
  });

  async function startListener(): Promise<ChangeListener> {
    listener = new ChangeListener({
      connectionString: db.url,
      handler: { changed: (change) => void changes.push(change), reset: () => void resets++ },
      logger,
      retry: { initialMs: 50, maxMs: 200 },
    });
    await listener.start();
    return listener;
  }

  /** notifyChange's statement (kysely's `sql`, compiled for PostgreSQL) on a plain pg client. */
  const on = (client: pg.Client) => {
    const compiler = new Kysely<Tables>({
      dialect: {
        createAdapter: () => new PostgresAdapter(),
        createDriver: () => new DummyDriver(),
        createIntrospector: (k) => new PostgresIntrospector(k),
        createQueryCompiler: () => new PostgresQueryCompiler(),
      },
    });
    return (change: CacheChange) => {
      const { sql, parameters } = changeNotification(change).compile(compiler);
      return client.query(sql, [...parameters]);
    };
  };

  /** Sends a change from another connection, as another instance would. */
  const send = (change: CacheChange) => withDatabase(db.url, (client) => on(client)(change));

  /** The listener's own backend(s) in this test's database, terminated as an operator or a failover would. */
  const terminateListener = () =>
    withDatabase(db.url, async (client) => {
      const { rows } = await client.query(
        'select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and application_name = $1',
        [CHANGE_LISTENER_APPLICATION_NAME],
      );
      return rows.length;
    });

  it(
    'delivers committed changes, never rolled-back ones, and resets the caches once per connection',
    { timeout: 20_000 },
    async () => {
      const started = await startListener();
      expect(started.listening).toBe(true);
      expect(resets).toBe(1);

      await send({ kind: 'program', id: 'p-committed' });
      await withDatabase(db.url, async (client) => {
        await client.query('begin');
        await on(client)({ kind: 'program', id: 'p-rolled-back' });
        await client.query('rollback');
      });
      await send({ kind: 'api_key', keyHash: 'h-committed' });
      await waitFor(() => changes.length >= 2, 5_000, 'two changes delivered');
      // The rolled-back one, sent between the two, would have arrived before the second.
      expect(changes).toEqual([
        { kind: 'program', id: 'p-committed' },
        { kind: 'api_key', keyHash: 'h-committed' },
      ]);
      expect(resets).toBe(1);
    },
  );

  it(
    'reconnects after its backend is terminated, resets the caches, logs it, and receives later changes',
    { timeout: 20_000 },
    async () => {
      const started = await startListener();
      expect(await terminateListener()).toBe(1);
      await waitFor(() => resets === 2, 10_000, 'the listener to reconnect');
      expect(started.listening).toBe(true);
      expect(logs.some((l) => /cache change listener: disconnected; reconnecting/.test(String(l.msg)))).toBe(true);
      expect(logs.some((l) => /cache change listener: reconnected/.test(String(l.msg)))).toBe(true);

      await send({ kind: 'program', id: 'after-reconnect' });
      await waitFor(() => changes.length === 1, 5_000, 'a change after the reconnect');
      expect(changes).toEqual([{ kind: 'program', id: 'after-reconnect' }]);

      // Twice more: the backoff starts over after each successful connect.
      for (let i = 0; i < 2; i++) {
        expect(await terminateListener()).toBe(1);
        await waitFor(() => resets === 3 + i, 10_000, `reconnect ${i + 2}`);
      }
    },
  );

  it('keeps trying while PostgreSQL refuses it, and listens once it can', { timeout: 20_000 }, async () => {
    // A database that does not exist yet: every attempt fails until the test creates it.
    const name = `${new URL(db.url).pathname.slice(1)}_later`;
    const url = new URL(db.url);
    url.pathname = `/${name}`;
    listener = new ChangeListener({
      connectionString: url.toString(),
      handler: { changed: (change) => void changes.push(change), reset: () => void resets++ },
      logger,
      retry: { initialMs: 50, maxMs: 200 },
    });
    await listener.start();
    expect(listener.listening).toBe(false);
    await waitFor(
      () => logs.filter((l) => /disconnected; reconnecting/.test(String(l.msg))).length >= 3,
      10_000,
      'three failed attempts',
    );
    await withDatabase(db.url, (client) => client.query(`create database "${name}"`));
    try {
      await waitFor(() => resets === 1, 10_000, 'the listener to connect');
      expect(listener.listening).toBe(true);
    } finally {
      await listener.close();
      await withDatabase(db.url, (client) => client.query(`drop database if exists "${name}" with (force)`));
    }
  });

  it(
    'notices a connection lost without a reset (heartbeat unanswered) and listens on a new one',
    { timeout: 20_000 },
    async () => {
      const target = new URL(db.url);
      const proxy = await startFreezableProxy(target.hostname, Number(target.port || 5432));
      try {
        listener = new ChangeListener({
          connectionString: proxy.urlFor(db.url),
          handler: { changed: (change) => void changes.push(change), reset: () => void resets++ },
          logger,
          connectTimeoutMs: 500,
          heartbeatMs: 200,
          retry: { initialMs: 50, maxMs: 200 },
        });
        await listener.start();
        expect(resets).toBe(1);
        // A failover or an expired NAT entry: no byte moves on the open connection, and no RST.
        proxy.blackholeExisting();
        await waitFor(
          () => resets === 2,
          10_000,
          'the listener to give up the dead connection and listen on a new one',
        );
        expect(proxy.accepted).toBe(2);
        await send({ kind: 'api_key', keyHash: 'after-blackhole' });
        await waitFor(() => changes.length === 1, 5_000, 'a change on the new connection');
      } finally {
        await listener?.close();
        await proxy.close();
      }
    },
  );

  it(
    'with probes sent from another connection: no false alarm while they arrive, an error and a new connection once one is lost',
    { timeout: 20_000 },
    async () => {
      // Every probe goes out through another connection, as the service's pool sends it; the test
      // swallows them on demand, as PgBouncer in transaction mode does when it hands the
      // notification to another client (which no server-process check can see while the pooler
      // keeps handing the listener the same process back).
      let swallow = false;
      let probes = 0;
      listener = new ChangeListener({
        connectionString: db.url,
        handler: { changed: (change) => void changes.push(change), reset: () => void resets++ },
        logger,
        heartbeatMs: 150,
        retry: { initialMs: 50, maxMs: 200 },
        sendProbe: async (payload) => {
          probes++;
          if (swallow) return;
          await withDatabase(db.url, (client) =>
            client.query('select pg_notify($1, $2)', [CACHE_CHANGES_CHANNEL, payload]),
          );
        },
      });
      await listener.start();
      await waitFor(() => probes >= 8, 10_000, 'eight probes delivered');
      expect(resets).toBe(1);
      expect(logs.filter((l) => Number(l.level) >= 40)).toEqual([]);
      // A probe is not a change: nothing reached the caches.
      expect(changes).toEqual([]);

      swallow = true;
      await waitFor(() => resets === 2, 5_000, 'the listener to give up the connection a probe never reached');
      const errors = logs.filter((l) => l.level === 50);
      expect(errors).toHaveLength(1);
      expect(String(errors[0].msg)).toMatch(/set DATABASE_DIRECT_URL/);
      expect(String(errors[0].why)).toMatch(/probe notification .* did not arrive/);

      // Said once, however often it recurs; changes sent once probes arrive again are delivered.
      await waitFor(() => resets === 3, 5_000, 'a second loss');
      expect(logs.filter((l) => l.level === 50)).toHaveLength(1);
      swallow = false;
      await send({ kind: 'program', id: 'after-probes' });
      await waitFor(() => changes.length === 1, 5_000, 'a change on the new connection');
    },
  );

  it('stops on close: no connection left, no reconnect', { timeout: 20_000 }, async () => {
    const started = await startListener();
    await started.close();
    expect(started.listening).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await terminateListener()).toBe(0);
    expect(resets).toBe(1);
  });
});
