import { createHash, randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { StandInServer, formFields, formMetadata, sendJson } from './rails/standin-server.js';

/*
 * A local Stripe that speaks Connect onboarding as Stripe documents it, for tests (read first:
 * nothing copied from Stripe's code):
 * - Authentication: `Authorization: Bearer <secret key>`, else 401 https://docs.stripe.com/api/authentication
 * - Form-encoded bodies (`application/x-www-form-urlencoded`, nested keys in brackets) https://docs.stripe.com/api
 * - POST /v1/accounts: `type` (express here), `email`, `capabilities[transfers][requested]`,
 *   `metadata[…]`; answers the Account object https://docs.stripe.com/api/accounts/create
 * - POST /v1/account_links: `account`, `type` (account_onboarding), `refresh_url`, `return_url`,
 *   all required; answers `{ object: "account_link", created, expires_at, url }`
 *   https://docs.stripe.com/api/account_links/create
 * - Idempotency-Key: the first answer replayed for the same key and parameters; other parameters
 *   under the same key: 400 idempotency_error https://docs.stripe.com/api/idempotent_requests
 * - Errors: `{ error: { type, code, message, param } }` with a 4xx https://docs.stripe.com/api/errors
 * Express onboarding itself happens on Stripe's pages: completeOnboarding() stands for it.
 */
export class StripeConnectStandIn extends StandInServer {
  readonly secretKey = `sk_test_${randomBytes(12).toString('hex')}`;
  readonly accounts = new Map<string, any>();
  /** Every request's method, path and form fields, in order. */
  readonly requests: { method: string; path: string; params: Record<string, string>; idempotencyKey?: string }[] = [];
  private readonly idempotent = new Map<string, { fingerprint: string; status: number; body: unknown }>();
  /** Answers the next requests with a 500 (Stripe down). */
  failing = false;

  protected async handle(req: IncomingMessage, res: ServerResponse, raw: string): Promise<void> {
    const url = new URL(req.url ?? '/', this.baseUrl);
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) =>
      sendJson(res, status, body, { 'request-id': `req_${randomBytes(7).toString('hex')}`, ...headers });
    const error = (status: number, type: string, message: string, extra: Record<string, unknown> = {}) =>
      send(status, { error: { type, message, ...extra } });
    if (this.failing) return error(500, 'api_error', 'Something went wrong on our end.');
    if (req.headers.authorization !== `Bearer ${this.secretKey}`)
      return error(401, 'invalid_request_error', 'Invalid API Key provided');
    if (req.method === 'POST' && !/^application\/x-www-form-urlencoded\b/.test(req.headers['content-type'] ?? '')) {
      return error(400, 'invalid_request_error', 'Invalid request: expected a form-encoded body');
    }
    const params = formFields(raw);
    const idempotencyKey = req.headers['idempotency-key'] as string | undefined;
    this.requests.push({
      method: req.method ?? '',
      path: url.pathname,
      params,
      ...(idempotencyKey ? { idempotencyKey } : {}),
    });

    const answer = (status: number, body: unknown) => {
      if (idempotencyKey)
        this.idempotent.set(`${url.pathname}:${idempotencyKey}`, {
          fingerprint: createHash('sha256').update(raw).digest('hex'),
          status,
          body,
        });
      send(status, body);
    };
    if (req.method === 'POST' && idempotencyKey) {
      const first = this.idempotent.get(`${url.pathname}:${idempotencyKey}`);
      if (first) {
        if (first.fingerprint !== createHash('sha256').update(raw).digest('hex'))
          return error(
            400,
            'idempotency_error',
            'Keys for idempotent requests can only be used with the same parameters they were first used with.',
          );
        return send(first.status, first.body, { 'idempotent-replayed': 'true' });
      }
    }

    if (req.method === 'POST' && url.pathname === '/v1/accounts') {
      if (!['express', 'standard', 'custom'].includes(params.type ?? ''))
        return error(400, 'invalid_request_error', 'Invalid type: must be one of express, standard, or custom', {
          param: 'type',
        });
      const id = `acct_${randomBytes(8).toString('hex')}`;
      const metadata = formMetadata(params);
      const capabilities = params['capabilities[transfers][requested]'] === 'true' ? { transfers: 'inactive' } : {};
      const account = {
        id,
        object: 'account',
        type: params.type,
        email: params.email ?? null,
        metadata,
        capabilities,
        details_submitted: false,
        charges_enabled: false,
        payouts_enabled: false,
        created: Math.floor(Date.now() / 1000),
      };
      this.accounts.set(id, account);
      return answer(200, account);
    }
    if (req.method === 'POST' && url.pathname === '/v1/account_links') {
      for (const param of ['account', 'type'])
        if (!params[param])
          return error(400, 'invalid_request_error', `Missing required param: ${param}.`, {
            param,
            code: 'parameter_missing',
          });
      if (!['account_onboarding', 'account_update'].includes(params.type))
        return error(400, 'invalid_request_error', 'Invalid type', { param: 'type' });
      for (const param of ['refresh_url', 'return_url']) {
        if (!params[param])
          return error(400, 'invalid_request_error', `Missing required param: ${param}.`, {
            param,
            code: 'parameter_missing',
          });
        if (!/^https?:\/\//.test(params[param]))
          return error(400, 'invalid_request_error', `Not a valid URL`, { param, code: 'url_invalid' });
      }
      if (!this.accounts.has(params.account))
        return error(400, 'invalid_request_error', `No such account: '${params.account}'`, {
          param: 'account',
          code: 'resource_missing',
        });
      const created = Math.floor(Date.now() / 1000);
      return answer(200, {
        object: 'account_link',
        created,
        expires_at: created + 300,
        url: `https://connect.stripe.com/setup/e/${params.account}/${randomBytes(9).toString('base64url')}`,
      });
    }
    return error(404, 'invalid_request_error', `Unrecognized request URL (${req.method}: ${url.pathname}).`);
  }

  /** Stands for the partner finishing Stripe's onboarding pages. */
  completeOnboarding(id: string): void {
    Object.assign(this.accounts.get(id), {
      details_submitted: true,
      payouts_enabled: true,
      capabilities: { transfers: 'active' },
    });
  }
}
