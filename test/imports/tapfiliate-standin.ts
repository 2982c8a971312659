import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Standin } from './rewardful-standin.js';

/**
 * A local stand-in for Tapfiliate's REST API 1.6 (https://tapfiliate.com/docs/rest/):
 * - authentication (summarised at api-evangelist/tapfiliate conventions/tapfiliate-conventions.yml): the API key in an `X-Api-Key` header; a wrong or
 *   missing key answers 401 with the documented error envelope `{ "message": "..." }`;
 * - pagination (#header-pagination): `page` (1-based), the list as a bare JSON array, and the next
 *   page in a `Link: <url?page=N>; rel="next"` header (absent on the last page);
 * - objects (affiliates, customers, payments, conversions with their commissions) as the reference
 *   shows them: amounts as numbers in the currency's major unit;
 * - programs (GET /programs/: id, title, currency, cookie_time, recurring_commissions) and each
 *   program's commission types (GET /programs/{program_id}/commission-types/: id, name, type
 *   `percentage` or `fixed`, percentage, amount), as the Programs section of the reference lists
 *   them; a program's commission types are given in its `commission_types` here and not listed
 *   with the program.
 * Rate limits are signalled (X-Ratelimit-*) but not quantified; the stand-in answers 429 with
 * Retry-After when told to.
 */
export interface TapfiliateData {
  affiliates: object[];
  customers: object[];
  payments: object[];
  conversions: object[];
  /** The account's programs, each with its `commission_types` (none when absent). */
  programs?: Array<Record<string, unknown> & { commission_types?: object[] }>;
}

export async function startTapfiliateStandin(apiKey: string, data: TapfiliateData, pageSize = 2): Promise<Standin> {
  const requests: Standin['requests'] = [];
  const rateLimitOnce = new Set<string>();
  const failures = new Map<string, number>();
  const lists: Record<string, object[]> = {
    '/1.6/affiliates/': data.affiliates,
    '/1.6/customers/': data.customers,
    '/1.6/payments/': data.payments,
    '/1.6/conversions/': data.conversions,
    '/1.6/programs/': (data.programs ?? []).map(({ commission_types: _, ...program }) => program),
  };
  for (const program of data.programs ?? [])
    lists[`/1.6/programs/${encodeURIComponent(String(program.id))}/commission-types/`] = program.commission_types ?? [];
  let base = '';
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      requests.push({ path: url.pathname + url.search, status });
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(JSON.stringify(body));
    };
    if (req.headers['x-api-key'] !== apiKey) return send(401, { message: 'Invalid API key' });
    if (rateLimitOnce.delete(url.pathname))
      return send(429, { message: 'Too many requests' }, { 'retry-after': '1', 'x-ratelimit-remaining': '0' });
    const page = Math.max(1, Number(url.searchParams.get('page') ?? 1));
    const failing = `${url.pathname}?page=${page}`;
    const left = failures.get(failing) ?? 0;
    if (left > 0) {
      failures.set(failing, left - 1);
      return send(500, { message: 'Internal Server Error' });
    }
    const list = lists[url.pathname];
    if (!list) return send(404, { message: 'Not found' });
    const headers: Record<string, string> = {};
    const links: string[] = [];
    if (page * pageSize < list.length) links.push(`<${base}${url.pathname.slice(4)}?page=${page + 1}>; rel="next"`);
    if (page > 1) links.push(`<${base}${url.pathname.slice(4)}?page=${page - 1}>; rel="prev"`);
    if (links.length) headers.link = links.join(', ');
    send(200, list.slice((page - 1) * pageSize, page * pageSize), headers);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  base = `http://127.0.0.1:${port}/1.6`;
  return {
    url: base,
    requests,
    rateLimitOnce,
    failures,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
