import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local stand-in for FirstPromoter's v2 admin API as documented:
 * - https://docs.firstpromoter.com/api-reference-v2/api-admin/authentication: `Authorization:
 *   Bearer <API key>` and `ACCOUNT-ID: <account id>`; without them 401 with an empty JSON object
 *   (https://docs.firstpromoter.com/api-reference-v2/api-affiliate/promoters/get-current-promoter:
 *   "No JSON response body is returned", example `{}`);
 * - https://docs.firstpromoter.com/api-reference-v2/api-admin/introduction: 400 requests a minute,
 *   then 429 (here once on demand, with Retry-After);
 * - lists `/company/promoters`, `/company/referrals`, `/company/payouts`, `/company/commissions`
 *   paged by `page` and `per_page` (at most 2 a page here), answering a JSON array (the envelope
 *   is not documented; Dub's importer, apps/web/lib/firstpromoter/api.ts, reads an array); a page
 *   past the end is an empty array;
 * - campaigns and rewards, unpaged as documented (a JSON array each):
 *   FirstPromoter's Campaigns OpenAPI, GET https://api.firstpromoter.com/api/v2/company/campaigns, as stored at api-evangelist/firstpromoter openapi/_original/firstpromoter-v2-campaigns-openapi.yml (GET /company/campaigns:
 *   id, name, visitor_cookie_life, rewards_for_promoters[] { apply_on, reward_id, reward }) and
 *   https://docs.firstpromoter.com/api-reference-v2/api-advanced/rewards/get-rewards (GET /company/rewards, `scope`
 *   promoters or referrals: id, name, is_promoter_reward, promoter_reward_type, duration,
 *   duration_in_months, schemas[] { unit, amount, flat_amount, rules }).
 */
export interface FirstPromoterData {
  promoters: any[];
  referrals: any[];
  payouts: any[];
  commissions: any[];
  campaigns?: any[];
  rewards?: any[];
}

export interface FirstPromoterStandin {
  url: string;
  requests: { path: string; status: number }[];
  rateLimitOnce: Set<string>;
  failures: Map<string, number>;
  close(): Promise<void>;
}

export async function startFirstPromoterStandin(
  apiKey: string,
  accountId: string,
  data: FirstPromoterData,
  pageSize = 2,
): Promise<FirstPromoterStandin> {
  const requests: FirstPromoterStandin['requests'] = [];
  const rateLimitOnce = new Set<string>();
  const failures = new Map<string, number>();
  const base = '/api/v2/company';
  const lists: Record<string, any[]> = {
    [`${base}/promoters`]: data.promoters,
    [`${base}/referrals`]: data.referrals,
    [`${base}/payouts`]: data.payouts,
    [`${base}/commissions`]: data.commissions,
  };
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      requests.push({ path: url.pathname + url.search, status });
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(JSON.stringify(body));
    };
    if (req.headers.authorization !== `Bearer ${apiKey}` || req.headers['account-id'] !== accountId)
      return send(401, {});
    if (rateLimitOnce.delete(url.pathname)) return send(429, { message: 'Too many requests' }, { 'retry-after': '1' });
    const left = failures.get(url.pathname) ?? 0;
    if (left > 0) {
      failures.set(url.pathname, left - 1);
      return send(500, { message: 'Internal server error' });
    }
    if (url.pathname === `${base}/campaigns`) return send(200, data.campaigns ?? []);
    if (url.pathname === `${base}/rewards`) {
      const scope = url.searchParams.get('scope');
      const promoters = scope === 'promoters' ? true : scope === 'referrals' ? false : null;
      return send(
        200,
        (data.rewards ?? []).filter((r) => promoters === null || r.is_promoter_reward === promoters),
      );
    }
    const list = lists[url.pathname];
    if (!list) return send(404, { message: 'Not found' });
    const perPage = Math.min(Number(url.searchParams.get('per_page') ?? 20), pageSize);
    const page = Math.max(1, Number(url.searchParams.get('page') ?? 1));
    send(200, list.slice((page - 1) * perPage, page * perPage));
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
