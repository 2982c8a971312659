import type { AddressInfo } from 'node:net';
import { type Server, createServer } from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import { createApp } from '../../server/src/app.js';
import { TEST_ADMIN_TOKEN, TEST_PUBLIC_BASE_URL, testServer } from '../support/server.js';
import { createOrganization } from '../support/api.js';

const TTL_MS = 1_000;
const servers: Server[] = [];

/** Another instance of the service on the same database, as behind a load balancer. */
async function instance(): Promise<string> {
  const { db } = await testServer();
  const { listener } = createApp({
    orm: db.orm,
    config: { ADMIN_TOKEN: TEST_ADMIN_TOKEN, PUBLIC_BASE_URL: TEST_PUBLIC_BASE_URL, API_KEY_CACHE_TTL_MS: TTL_MS },
  });
  const server = createServer(listener).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  servers.push(server);
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const me = (base: string, key: string) =>
  fetch(`${base}/api/me`, { headers: { authorization: `Bearer ${key}` } }).then((r) => r.status);

afterAll(() => {
  for (const s of servers) s.close();
});

describe('revoking an API key with the key cache on (API_KEY_CACHE_TTL_MS)', () => {
  it('is refused at once by the instance that revoked it and by every other instance within the TTL', async () => {
    const [a, b] = [await instance(), await instance()];
    const org = await createOrganization();
    // Both instances have verified (and cached) the key.
    expect(await me(a, org.key)).toBe(200);
    expect(await me(b, org.key)).toBe(200);

    const revoked = await fetch(`${a}/admin/organizations/${org.id}/api-keys/${org.keyId}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
    });
    expect(revoked.status).toBe(200);
    const revokedAt = Date.now();
    expect(await me(a, org.key)).toBe(401);

    // Instance b only learns of it when its cache entry expires: at most TTL_MS later.
    let refusedAfterMs = -1;
    while (Date.now() - revokedAt < TTL_MS + 2_000) {
      if ((await me(b, org.key)) === 401) {
        refusedAfterMs = Date.now() - revokedAt;
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(refusedAfterMs, 'instance b still accepted the revoked key past the TTL').toBeGreaterThanOrEqual(0);
    expect(refusedAfterMs).toBeLessThanOrEqual(TTL_MS + 250);
  });
});
