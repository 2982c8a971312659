import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HASH_CLEAR_RESET_TOKENS } from '../../server/src/db/migrations/Migration20270115000000_hashed_verifications.js';
import { call, ownerSession, signIn, startService, type PeopleServer } from './support/people.js';

/** One-time secrets stay out of the access log and out of the database in clear (docs/security.md). */
let service: PeopleServer;
let lines: string[];

beforeAll(async () => {
  lines = [];
  service = await startService({}, undefined, { write: (line: string) => void lines.push(line) });
}, 60_000);
afterAll(() => service?.close());

const accessLines = () =>
  lines
    .map((l) => JSON.parse(l) as { msg: string; req?: { url: string } })
    .filter((l) => l.msg === 'request completed');

describe('the access log', () => {
  it('writes every one-time token of a URL as token=[redacted], on every page and route that takes one', async () => {
    const base = service.baseUrl;
    const organizationId = '00000000-0000-4000-8000-000000000001';
    const secret = 'S3cretTokenValueOfTheLink_abcdefghijklmnop';
    const urls = [
      `/dashboard/accept-invitation?token=${secret}`,
      `/dashboard/reset-password?token=${secret}`,
      `/portal/${organizationId}/sign-in/link?token=${secret}`,
      `/portal/${organizationId}/preview?token=${secret}&mode=test`,
      `/auth/magic-link/verify?token=${secret}&callbackURL=%2Fdashboard%2Foverview`,
      `/auth/reset-password/${secret}?callbackURL=%2Fdashboard%2Freset-password`,
      `/api/programs?api_key=${secret}&limit=5`,
    ];
    lines.length = 0;
    for (const url of urls)
      await fetch(base + url, {
        redirect: 'manual',
        headers: { referer: `${base}/portal/${organizationId}/sign-in/link?token=${secret}` },
      });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(lines.join('\n')).not.toContain(secret);
    expect(accessLines().map((l) => l.req!.url)).toEqual([
      '/dashboard/accept-invitation?token=[redacted]',
      '/dashboard/reset-password?token=[redacted]',
      `/portal/${organizationId}/sign-in/link?token=[redacted]`,
      `/portal/${organizationId}/preview?token=[redacted]&mode=test`,
      '/auth/magic-link/verify?token=[redacted]&callbackURL=%2Fdashboard%2Foverview',
      '/auth/reset-password/[redacted]?callbackURL=%2Fdashboard%2Freset-password',
      '/api/programs?api_key=[redacted]&limit=5',
    ]);
  });

  it('leaves URLs without a secret as they are', async () => {
    lines.length = 0;
    await fetch(`${service.baseUrl}/api/programs?limit=5&cursor=abc`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(accessLines().map((l) => l.req!.url)).toEqual(['/api/programs?limit=5&cursor=abc']);
  });
});

describe('password-reset tokens', () => {
  const resetLink = async (email: string): Promise<string> => {
    lines.length = 0;
    expect((await call(service.baseUrl, 'POST', '/auth/request-password-reset', { body: { email } })).status).toBe(200);
    const mail = lines.map((l) => JSON.parse(l)).find((l) => l.mail?.to === email && /Reset/.test(l.mail.subject));
    return new URL(/(http\S+reset-password\S+)/.exec(mail.mail.text)![1]).searchParams.get('token')!;
  };
  const verifications = () =>
    service.db.orm.em
      .getConnection()
      .execute<{ identifier: string; value: string }[]>('select identifier, value from verifications');

  it('are stored hashed: the table holds no reset token in clear, and the e-mailed link still resets the password', async () => {
    const owner = await ownerSession(service.baseUrl);
    const token = await resetLink(owner.email);
    expect(token.length).toBeGreaterThanOrEqual(16);
    const rows = await verifications();
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) expect(`${row.identifier} ${row.value}`).not.toContain(token);
    const reset = await call(service.baseUrl, 'POST', '/auth/reset-password', {
      body: { token, newPassword: 'a hashed new passphrase' },
    });
    expect(reset).toMatchObject({ status: 200, body: { status: true } });
    expect(await signIn(service.baseUrl, owner.email, 'a hashed new passphrase')).toMatch(/^svc\.session_token=/);
  });

  it('written in clear by an earlier release are hashed by the migration, and their link still works', async () => {
    const owner = await ownerSession(service.baseUrl);
    const connection = service.db.orm.em.getConnection();
    const [user] = await connection.execute<{ id: string }[]>('select id from users where email = ?', [owner.email]);
    const token = `legacyClearToken${Date.now()}`;
    await connection.execute(
      `insert into verifications (id, identifier, value, expires_at, created_at, updated_at) values (gen_random_uuid(), ?, ?, now() + interval '1 hour', now(), now())`,
      [`reset-password:${token}`, user.id],
    );
    await connection.execute(HASH_CLEAR_RESET_TOKENS);
    for (const row of await verifications()) expect(row.identifier).not.toContain(token);
    const reset = await call(service.baseUrl, 'POST', '/auth/reset-password', {
      body: { token, newPassword: 'after the migration' },
    });
    expect(reset).toMatchObject({ status: 200, body: { status: true } });
    expect(await signIn(service.baseUrl, owner.email, 'after the migration')).toMatch(/^svc\.session_token=/);
  });
});
