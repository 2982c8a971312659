import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import {
  call,
  createMerchantOn,
  describeWithPostgres,
  startService,
  stopService,
  waitFor,
  type ServiceProcess,
} from '../reliability/support/service.js';
import { Receiver } from './support/receiver.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** WEBHOOK_DELIVERY=off on the API, `npm run worker` apart: the API writes, the worker delivers. */
describeWithPostgres('delivery in a separate worker process', () => {
  let db: TestDatabase;
  let service: ServiceProcess | undefined;
  let receiver: Receiver;
  let worker: ReturnType<typeof spawn> | undefined;
  const env = { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', ENCRYPTION_KEY: 'c'.repeat(64) };

  beforeAll(async () => {
    db = await createTestDatabase();
    receiver = await new Receiver().start();
  });
  afterAll(async () => {
    if (worker && worker.exitCode === null) {
      worker.kill('SIGKILL');
      await once(worker, 'exit');
    }
    await stopService(service);
    await receiver?.stop();
    await db?.stop();
  });

  it('the API alone queues nothing; the worker delivers, and stops on SIGTERM', { timeout: 120_000 }, async () => {
    service = await startService(db.url, { ...env, WEBHOOK_DELIVERY: 'off' });
    const merchant = await createMerchantOn(service.url);
    const endpoint = await call(service.url, 'POST', '/api/webhook-endpoints', {
      key: merchant.key,
      body: { url: receiver.url, events: ['conversion.created'] },
    });
    receiver.secret = endpoint.body.data.secret;
    for (let i = 0; i < 10; i++) {
      expect(
        (
          await call(service.url, 'POST', '/api/conversions', {
            key: merchant.key,
            body: { external_id: `w-${i}`, amount: 10, ref: merchant.slug },
          })
        ).status,
      ).toBe(201);
    }
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(receiver.received).toHaveLength(0);

    worker = spawn(process.execPath, ['--import', 'tsx', 'server/src/jobs/worker.ts'], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        DATABASE_URL: db.url,
        LOG_LEVEL: 'warn',
        DB_POOL_MAX: '3',
        ...env,
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    await waitFor(() => receiver.received.length >= 10, 60_000, 'the worker to deliver 10 events');
    expect(receiver.received.every((r) => r.verified === true)).toBe(true);
    worker.kill('SIGTERM');
    const [code] = await once(worker, 'exit');
    expect(code).toBe(0);
  });
});
