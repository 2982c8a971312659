import { randomBytes, randomUUID } from 'node:crypto';
import type { MikroORM } from '@mikro-orm/postgresql';
import { expect } from 'vitest';
import { Db } from '../../server/src/db/sql.js';
import { hashToken } from '../../server/src/modules/partners/partners.service.js';
import { request } from './api.js';
import { testServer } from './server.js';
import { sql } from 'kysely';

/**
 * The session cookie of a partner signed in to the portal of the service at `baseUrl`: a one-time
 * sign-in link written as the service writes one (its token's hash), then exchanged at
 * POST /partner/api/sign-in as the portal does. What the e-mail carries is tested in test/web
 * (portal tests with an SMTP receiver).
 */
export async function partnerCookie(
  baseUrl: string,
  orm: MikroORM,
  organizationId: string,
  email: string,
): Promise<string> {
  const token = randomBytes(32).toString('base64url');
  await Db.of(orm).rows(
    sql`insert into partner_sign_in_links (id, organization_id, email, token_hash, expires_at) values (${randomUUID()}, ${organizationId}, ${email}, ${hashToken(token)}, ${new Date(Date.now() + 60_000)})`,
  );
  const res = await fetch(`${baseUrl}/partner/api/sign-in`, {
    method: 'POST',
    headers: { origin: baseUrl, 'content-type': 'application/json' },
    body: JSON.stringify({ organization_id: organizationId, token }),
  });
  expect(res.status, await res.clone().text()).toBe(200);
  return res.headers
    .getSetCookie()
    .find((c) => c.startsWith('svc.partner_session='))!
    .split(';')[0];
}

/** A partner signed in to the portal of the shared test server, with a client that sends their session and the portal's Origin. */
export async function partnerSession(organizationId: string, email: string) {
  const { db, baseUrl } = await testServer();
  const cookie = await partnerCookie(baseUrl, db.orm, organizationId, email);
  const headers = { cookie, origin: baseUrl };
  return {
    cookie,
    get: <T = any>(path: string) => request<T>('GET', path, { headers }),
    post: <T = any>(path: string, body?: unknown) => request<T>('POST', path, { headers, body }),
    put: <T = any>(path: string, body?: unknown) => request<T>('PUT', path, { headers, body }),
  };
}
export type PartnerClient = Awaited<ReturnType<typeof partnerSession>>;
