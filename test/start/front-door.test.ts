import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { startService, stopService, type ServiceProcess } from '../reliability/support/service.js';

/**
 * The address the start-up log invites you to open leads to the dashboard: `GET /` redirects to
 * /dashboard (not a 404 of the API), and the log line names an address that does.
 */
describe('the front door', () => {
  let db: TestDatabase | undefined;
  let service: ServiceProcess | undefined;
  afterAll(async () => {
    await stopService(service);
    await db?.stop();
  });

  it('the start-up log says to open an address; opening it leads to the dashboard', { timeout: 120_000 }, async () => {
    db = await createTestDatabase();
    service = await startService(db.url);
    const line = service.logs.find((entry) => typeof entry.port === 'number' && /listening/.test(String(entry.msg)));
    const port = String(line!.port);
    const res = await fetch(`http://127.0.0.1:${port}/`, { redirect: 'manual' });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('/dashboard');
    const invited = /open (http:\/\/localhost:\d+\/\S*)/.exec(String(line!.msg))?.[1];
    expect(invited, String(line!.msg)).toBe(`http://localhost:${port}/`);
    // The dashboard's own page answers there (200 once built; 503 saying how to build it otherwise), never the API's 404.
    const dashboard = await fetch(new URL('/dashboard', service.url), { redirect: 'manual' });
    expect([200, 503]).toContain(dashboard.status);
    expect(dashboard.headers.get('content-type')).not.toContain('application/json');
  });
});
