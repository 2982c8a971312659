import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Standin } from './rewardful-standin.js';

/**
 * A local stand-in for PartnerStack's vendor API v2 (https://docs.partnerstack.com/reference):
 * - auth (the reference's security schemes: basicAuth, bearerAuth): HTTP Basic, public key as
 *   user name and secret key as password, or a Bearer token; anything else answers 401
 *   `{ "message": "Unauthorized", "status": 401 }` (the body's wording is not documented);
 * - lists (GET /partnerships, /customers, /rewards): `limit` and the `starting_after` cursor (the
 *   `key` of the last item seen), answering `{ data: { items: [...], has_more }, message, status }`
 *   as Dub's client reads it (dubinc/dub apps/web/lib/partnerstack/api.ts);
 * - objects as the reference and Dub's schemas (apps/web/lib/partnerstack/schemas.ts) show them:
 *   amounts in cents, created_at in milliseconds.
 * PartnerStack publishes no rate limit; the stand-in answers 429 with Retry-After when told to.
 */
export interface PartnerStackData {
  partnerships: Json[];
  customers: Json[];
  rewards: Json[];
}
type Json = Record<string, unknown>;

export async function startPartnerStackStandin(
  auth: { publicKey: string; secretKey: string; token: string },
  data: PartnerStackData,
  pageSize = 2,
): Promise<Standin> {
  const requests: Standin['requests'] = [];
  const rateLimitOnce = new Set<string>();
  const failures = new Map<string, number>();
  const lists: Record<string, Json[]> = {
    '/api/v2/partnerships': data.partnerships,
    '/api/v2/customers': data.customers,
    '/api/v2/rewards': data.rewards,
  };
  const basic = `Basic ${Buffer.from(`${auth.publicKey}:${auth.secretKey}`).toString('base64')}`;
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      requests.push({ path: url.pathname + url.search, status });
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(JSON.stringify(body));
    };
    const given = req.headers.authorization ?? '';
    if (given !== basic && given !== `Bearer ${auth.token}`) return send(401, { message: 'Unauthorized', status: 401 });
    if (rateLimitOnce.delete(url.pathname))
      return send(429, { message: 'Too many requests', status: 429 }, { 'retry-after': '1' });
    const failing = `${url.pathname}?starting_after=${url.searchParams.get('starting_after') ?? ''}`;
    const left = failures.get(failing) ?? 0;
    if (left > 0) {
      failures.set(failing, left - 1);
      return send(500, { message: 'Internal Server Error', status: 500 });
    }
    const list = lists[url.pathname];
    if (!list) return send(404, { message: 'Not found', status: 404 });
    const limit = Math.min(Number(url.searchParams.get('limit') ?? 10), 250, pageSize);
    const after = url.searchParams.get('starting_after');
    const start = after ? list.findIndex((item) => item.key === after) + 1 : 0;
    if (after && start === 0) return send(400, { message: `starting_after: no such key ${after}`, status: 400 });
    const items = list.slice(start, start + limit);
    send(200, { data: { items, has_more: start + limit < list.length }, message: 'Items retrieved', status: 200 });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/api/v2`,
    requests,
    rateLimitOnce,
    failures,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
