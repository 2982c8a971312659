import { randomBytes, randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import { Sql } from '../../server/src/db/sql.js';
import { hashToken } from '../../server/src/modules/partners/partners.service.js';
import { request } from './api.js';
import { testServer } from './server.js';

/**
 * A partner signed in to the portal of the shared test server: a one-time sign-in link written as
 * the service writes one (its token's hash), then exchanged at POST /partner/api/sign-in as the
 * portal does. What the e-mail carries is tested in test/web (portal tests with an SMTP receiver).
 */
export async function partnerSession(organizationId: string, email: string) {
  const { db, baseUrl } = await testServer();
  const token = randomBytes(32).toString('base64url');
  await Sql.of(db.orm).rows('insert into partner_sign_in_links (id, organization_id, email, token_hash, expires_at) values (?, ?, ?, ?, ?)', [
    randomUUID(),
    organizationId,
    email,
    hashToken(token),
    new Date(Date.now() + 60_000),
  ]);
  const signedIn = await request('POST', '/partner/api/sign-in', { headers: { origin: baseUrl }, body: { organization_id: organizationId, token } });
  expect(signedIn.status, JSON.stringify(signedIn.body)).toBe(200);
  const cookie = signedIn.headers.getSetCookie().find((c) => c.startsWith('svc.partner_session='))!.split(';')[0]!;
  const headers = { cookie, origin: baseUrl };
  return {
    cookie,
    get: <T = any>(path: string) => request<T>('GET', path, { headers }),
    post: <T = any>(path: string, body?: unknown) => request<T>('POST', path, { headers, body }),
    put: <T = any>(path: string, body?: unknown) => request<T>('PUT', path, { headers, body }),
  };
}
export type PartnerClient = Awaited<ReturnType<typeof partnerSession>>;
