import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local stand-in for Rewardful's REST API, as its reference documents it:
 * - https://developers.rewardful.com/rest-api/overview: HTTP Basic auth, the API Secret as the user
 *   name and no password; a wrong secret answers 401 `{ "error": "Invalid API Secret." }`.
 * - lists (https://developers.rewardful.com/rest-api/affiliates/list and the referrals,
 *   commissions and payouts lists): `page` and `limit` (1-100) query parameters, answering
 *   `{ pagination: { previous_page, current_page, next_page, count, limit, total_pages,
 *   total_count }, data: [...] }`, newest first.
 * - objects as documented: affiliates/object, referrals/object, commissions/object,
 *   payouts/the-payout-object (amounts in cents of `currency`).
 * Rewardful documents no rate limit; the stand-in answers 429 with Retry-After when told to
 * (`rateLimitOnce`), which is how the import must behave whatever the real limit is.
 */
export interface StandinData {
  affiliates: object[];
  referrals: object[];
  payouts: object[];
  commissions: object[];
  /** The campaigns (https://developers.rewardful.com/rest-api/campaigns/the-campaign-object); none unless given. */
  campaigns?: object[];
}

export interface Standin {
  url: string;
  requests: { path: string; status: number }[];
  /** Paths (without query) that answer 429 once, with Retry-After: 1. */
  rateLimitOnce: Set<string>;
  /** `path?page=N` -> how many more times that page answers 500 (a source having a bad moment). */
  failures: Map<string, number>;
  close(): Promise<void>;
}

export async function startRewardfulStandin(secret: string, data: StandinData, pageSize = 2): Promise<Standin> {
  const requests: Standin['requests'] = [];
  const rateLimitOnce = new Set<string>();
  const failures = new Map<string, number>();
  const lists: Record<string, object[]> = {
    '/v1/affiliates': data.affiliates,
    '/v1/referrals': data.referrals,
    '/v1/payouts': data.payouts,
    '/v1/commissions': data.commissions,
    '/v1/campaigns': data.campaigns ?? [],
  };
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      requests.push({ path: url.pathname + url.search, status });
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(JSON.stringify(body));
    };
    const auth = req.headers.authorization ?? '';
    const user = auth.startsWith('Basic ')
      ? Buffer.from(auth.slice(6), 'base64').toString('utf8').split(':')[0]
      : undefined;
    if (user !== secret) return send(401, { error: 'Invalid API Secret.' });
    if (rateLimitOnce.delete(url.pathname)) return send(429, { error: 'Too many requests' }, { 'retry-after': '1' });
    const failing = `${url.pathname}?page=${url.searchParams.get('page') ?? '1'}`;
    const left = failures.get(failing) ?? 0;
    if (left > 0) {
      failures.set(failing, left - 1);
      return send(500, { error: 'Internal Server Error' });
    }
    const list = lists[url.pathname];
    if (!list) return send(404, { error: 'Not found' });
    const limit = Math.min(Number(url.searchParams.get('limit') ?? 25), 100, pageSize);
    const page = Math.max(1, Number(url.searchParams.get('page') ?? 1));
    const totalPages = Math.max(1, Math.ceil(list.length / limit));
    send(200, {
      pagination: {
        previous_page: page > 1 ? page - 1 : null,
        current_page: page,
        next_page: page < totalPages ? page + 1 : null,
        count: list.slice((page - 1) * limit, page * limit).length,
        limit,
        total_pages: totalPages,
        total_count: list.length,
      },
      data: list.slice((page - 1) * limit, page * limit),
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    rateLimitOnce,
    failures,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
