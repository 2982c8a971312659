import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local stand-in for Tolt's v1 REST API as documented:
 * - https://docs.tolt.com/authentication: `Authorization: Bearer <API key>`; a wrong key answers 401
 *   `{ success: false, error: { message: "Invalid API key provided", type: "authentication_error" } }`
 *   (https://docs.tolt.com/introduction);
 * - lists (https://docs.tolt.com/partners/list, links/list, customers/list, commissions/list):
 *   `program_id` (required), `limit` (max 100; here at most 2 a page), `starting_after` (an item
 *   id), answering `{ success, has_more, total_count, data }`; filters `partner_id` (links) and
 *   `status` (commissions); `expand[]=customer` (https://docs.tolt.com/commissions/retrieve).
 * Tolt documents no rate limit: `rateLimitOnce` answers 429 with Retry-After once, as any limit would.
 * With `nextCursor`, lists also answer `next_cursor` (an opaque cursor) and `starting_after` takes
 * it, as the v2 reference documents (https://docs.tolt.com/api-reference/partners/list-partners).
 */
export interface ToltData {
  partners: any[];
  links: any[];
  customers: any[];
  commissions: any[];
}

export interface ToltStandin {
  url: string;
  requests: { path: string; status: number }[];
  rateLimitOnce: Set<string>;
  /** Path (without query) -> how many more times it answers 500. */
  failures: Map<string, number>;
  /** Requests it matches get no answer until release() (a source that hangs). */
  hold: ((url: URL) => boolean) | null;
  /** Requests waiting on `hold` now. */
  held(): number;
  /** Answers the held requests (those whose client has not gone). */
  release(): void;
  close(): Promise<void>;
}

export async function startToltStandin(
  apiKey: string,
  programId: string,
  data: ToltData,
  pageSize = 2,
  nextCursor = false,
): Promise<ToltStandin> {
  const requests: ToltStandin['requests'] = [];
  const rateLimitOnce = new Set<string>();
  const failures = new Map<string, number>();
  const lists: Record<string, any[]> = {
    '/v1/partners': data.partners,
    '/v1/links': data.links,
    '/v1/customers': data.customers,
    '/v1/commissions': data.commissions,
  };
  let waiting: (() => void)[] = [];
  const standin = { hold: null as ToltStandin['hold'] };
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (standin.hold?.(url)) {
      waiting.push(() => answer(req, res, url));
      return;
    }
    answer(req, res, url);
  });
  const answer = (req: IncomingMessage, res: ServerResponse, url: URL) => {
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      requests.push({ path: url.pathname + url.search, status });
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(JSON.stringify(body));
    };
    if (req.headers.authorization !== `Bearer ${apiKey}`)
      return send(401, {
        success: false,
        error: { message: 'Invalid API key provided', type: 'authentication_error' },
      });
    if (rateLimitOnce.delete(url.pathname))
      return send(
        429,
        { success: false, error: { message: 'Too many requests', type: 'rate_limit_error' } },
        { 'retry-after': '1' },
      );
    const left = failures.get(url.pathname) ?? 0;
    if (left > 0) {
      failures.set(url.pathname, left - 1);
      return send(500, { success: false, error: { message: 'Internal error', type: 'api_error' } });
    }
    let list = lists[url.pathname];
    if (!list) return send(404, { success: false, error: { message: 'Not found', type: 'invalid_request_error' } });
    if (url.searchParams.get('program_id') !== programId)
      return send(400, { success: false, error: { message: 'program_id is required', type: 'invalid_request_error' } });
    const partner = url.searchParams.get('partner_id');
    if (partner) list = list.filter((r) => r.partner_id === partner);
    const status = url.searchParams.get('status');
    if (status) list = list.filter((r) => r.status === status);
    if (url.searchParams.getAll('expand[]').includes('customer'))
      list = list.map((r) => ({ ...r, customer: data.customers.find((c) => c.id === r.customer_id) ?? null }));
    const limit = Math.min(Number(url.searchParams.get('limit') ?? 10), 100, pageSize);
    let after = url.searchParams.get('starting_after');
    if (after?.startsWith('cur_')) after = Buffer.from(after.slice(4), 'base64url').toString('utf8');
    const start = after ? list.findIndex((r) => r.id === after) + 1 : 0;
    const page = list.slice(start, start + limit);
    const hasMore = start + limit < list.length;
    const cursor =
      nextCursor && hasMore ? { next_cursor: `cur_${Buffer.from(page.at(-1).id).toString('base64url')}` } : {};
    send(200, { success: true, has_more: hasMore, ...cursor, total_count: list.length, data: page });
  };
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(standin, {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    rateLimitOnce,
    failures,
    held: () => waiting.length,
    release: () => {
      const answers = waiting;
      waiting = [];
      for (const a of answers) a();
    },
    close: () => {
      standin.hold = null;
      for (const a of waiting) a();
      waiting = [];
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  });
}
