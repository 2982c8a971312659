import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:http';
import pino from 'pino';
import { createApp, type App, type AppDeps } from '../../../server/src/app.js';
import { configureHttpServer } from '../../../server/src/http/http-server.js';
import { createTestDatabase, type TestDatabase } from '../../support/database.js';
import { TEST_ADMIN_TOKEN } from '../../support/server.js';

export interface PeopleServer {
  baseUrl: string;
  db: TestDatabase;
  /** The partner notices (partners/partner-notices.ts): not started; a test runs a round with runOnce(). */
  partnerNotices?: App['partnerNotices'];
  close(): Promise<void>;
}

/** A service of its own (the shared test server's sign-in budget is per address, and every test is 127.0.0.1). */
export async function startService(
  config: Partial<AppDeps['config']> & Record<string, unknown> = {},
  db?: TestDatabase,
  /** Where its log lines go (JSON, one per write): e-mails are logged. Default: silent. */
  logTo?: { write: (line: string) => void },
  /** More of createApp's dependencies (e.g. `webDist`, a build of the web app of the test's own). */
  appDeps: Partial<AppDeps> = {},
): Promise<PeopleServer> {
  const database = db ?? (await createTestDatabase());
  // Listening first: unless the test configures another, the app's PUBLIC_BASE_URL (the base of
  // its links) is the address it serves at, as `npm start`'s default is.
  const server: Server = await new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => resolve(s));
  });
  const { port } = server.address() as AddressInfo;
  const { listener, mailQueue, partnerNotices } = createApp({
    ...appDeps,
    orm: database.orm,
    logger: logTo ? pino({ level: 'info' }, logTo) : undefined,
    config: {
      ADMIN_TOKEN: TEST_ADMIN_TOKEN,
      API_KEY_CACHE_TTL_MS: 5_000,
      SIGN_IN_RATE_LIMIT_MAX: 1000,
      PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
      ...config,
    } as AppDeps['config'],
  });
  server.on('request', listener);
  configureHttpServer(server, pino({ level: 'silent' }));
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    db: database,
    partnerNotices,
    close: () =>
      new Promise<void>((resolve) => server.close(() => resolve()))
        .then(() => mailQueue?.stop())
        .then(() => (db ? undefined : database.stop())),
  };
}

/** fetch against the service, JSON in and out. */
export async function call(
  baseUrl: string,
  method: string,
  path: string,
  options: { headers?: Record<string, string>; body?: unknown } = {},
) {
  const headers: Record<string, string> = { ...(options.headers ?? {}) };
  if (options.body !== undefined) headers['content-type'] ??= 'application/json';
  // /auth refuses state-changing requests from other origins; a browser always sends Origin with them.
  if (path.startsWith('/auth/')) headers.origin ??= baseUrl;
  const res = await fetch(baseUrl + path, {
    method,
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
    redirect: 'manual',
  });
  const text = await res.text();
  let body: any = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON
  }
  return { status: res.status, body, headers: res.headers };
}

export const PASSWORD = 'correct horse battery';

/** An organization (operator), its first owner invited by the operator, accepted and signed in. */
export async function ownerSession(baseUrl: string, name = `Org ${Math.random().toString(36).slice(2, 8)}`) {
  const admin = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };
  const org = await call(baseUrl, 'POST', '/admin/organizations', { headers: admin, body: { name } });
  if (org.status !== 201) throw new Error(`organization: ${org.status} ${JSON.stringify(org.body)}`);
  const email = `owner-${Math.random().toString(36).slice(2, 10)}@example.com`;
  const invited = await call(baseUrl, 'POST', `/admin/organizations/${org.body.data.organization.id}/invitations`, {
    headers: admin,
    body: { email },
  });
  if (invited.status !== 201) throw new Error(`invitation: ${invited.status} ${JSON.stringify(invited.body)}`);
  const token = new URL(invited.body.data.accept_url).searchParams.get('token')!;
  const accepted = await call(baseUrl, 'POST', '/auth/invitations/accept', {
    body: { token, name: 'Olivia Owner', password: PASSWORD },
  });
  if (accepted.status !== 201) throw new Error(`accept: ${accepted.status} ${JSON.stringify(accepted.body)}`);
  const cookie = await signIn(baseUrl, email, PASSWORD);
  return {
    organization: org.body.data.organization as { id: string; name: string },
    apiKey: org.body.data.api_key as string,
    email,
    cookie,
    acceptUrl: invited.body.data.accept_url as string,
  };
}

export async function signIn(baseUrl: string, email: string, password: string): Promise<string> {
  const res = await fetch(`${baseUrl}/auth/sign-in/email`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: baseUrl },
    body: JSON.stringify({ email, password }),
  });
  if (res.status !== 200) throw new Error(`sign-in: ${res.status} ${await res.text()}`);
  return sessionCookieOf(res.headers);
}

export function sessionCookieOf(headers: Headers): string {
  const cookie = headers.getSetCookie().find((c) => c.includes('session_token='));
  if (!cookie) throw new Error('no session cookie');
  return cookie.split(';')[0];
}

/** Headers of a dashboard request: the session cookie, and the dashboard's own origin. */
export const session = (baseUrl: string, cookie: string) => ({ cookie, origin: baseUrl });
