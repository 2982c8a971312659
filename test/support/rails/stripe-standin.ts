import { createHash, randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { StandInServer, formFields, formMetadata, sendJson } from './standin-server.js';

/*
 * A local Stripe that speaks the Transfers API as Stripe documents it, for tests:
 * - POST /v1/transfers (form-encoded; amount, currency, destination, transfer_group, metadata)
 *   https://docs.stripe.com/api/transfers/create
 * - Idempotency-Key: the first result replayed for the same key and parameters; other parameters
 *   under the same key: 400 idempotency_error https://docs.stripe.com/api/idempotent_requests
 * - GET /v1/transfers?transfer_group=… https://docs.stripe.com/api/transfers/list
 * - GET /v1/transfers/{id} https://docs.stripe.com/api/transfers/retrieve
 * Connected accounts are declared by the test (connect); reverse() reverses a transfer as
 * POST /v1/transfers/{id}/reversals would.
 */
export class StripeStandIn extends StandInServer {
  readonly secretKey = `sk_test_${randomBytes(12).toString('hex')}`;
  readonly transfers = new Map<string, any>();
  readonly createRequests: Record<string, string>[] = [];
  private readonly accounts = new Set<string>();
  private readonly idempotent = new Map<string, { params: string; status: number; body: unknown }>();
  private drop = 0;

  connect(): string {
    const id = `acct_${randomBytes(8).toString('hex')}`;
    this.accounts.add(id);
    return id;
  }

  dropAnswers(count = 1): void {
    this.drop = count;
  }

  transferOf(payoutId: string): any {
    return [...this.transfers.values()].find((t) => t.metadata.payout_id === payoutId);
  }

  reverse(id: string): any {
    const t = this.transfers.get(id);
    t.reversed = true;
    t.amount_reversed = t.amount;
    return t;
  }

  protected async handle(req: IncomingMessage, res: ServerResponse, raw: string): Promise<void> {
    const url = new URL(req.url ?? '/', this.baseUrl);
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) =>
      sendJson(res, status, body, { 'request-id': `req_${randomBytes(7).toString('hex')}`, ...headers });
    const invalid = (status: number, type: string, message: string, extra: Record<string, unknown> = {}) =>
      send(status, { error: { type, message, ...extra } });
    if (req.headers.authorization !== `Bearer ${this.secretKey}`)
      return invalid(401, 'invalid_request_error', 'Invalid API Key provided');

    if (req.method === 'POST' && url.pathname === '/v1/transfers') {
      const params = formFields(raw);
      this.createRequests.push(params);
      const key = req.headers['idempotency-key'] as string | undefined;
      const fingerprint = createHash('sha256').update(raw).digest('hex');
      if (key && this.idempotent.has(key)) {
        const first = this.idempotent.get(key)!;
        if (first.params !== fingerprint)
          return invalid(
            400,
            'idempotency_error',
            `Keys for idempotent requests can only be used with the same parameters they were first used with.`,
          );
        return send(first.status, first.body, { 'idempotent-replayed': 'true' });
      }
      const amount = Number(params.amount);
      let status = 200;
      let body: unknown;
      if (!Number.isInteger(amount) || amount <= 0) {
        status = 400;
        body = {
          error: {
            type: 'invalid_request_error',
            code: 'parameter_invalid_integer',
            param: 'amount',
            message: 'Invalid integer',
          },
        };
      } else if (!this.accounts.has(params.destination ?? '')) {
        status = 400;
        body = {
          error: {
            type: 'invalid_request_error',
            code: 'resource_missing',
            param: 'destination',
            message: `No such destination: '${params.destination}'`,
          },
        };
      } else {
        const id = `tr_${randomBytes(12).toString('hex')}`;
        const transfer = {
          id,
          object: 'transfer',
          amount,
          amount_reversed: 0,
          currency: params.currency,
          destination: params.destination,
          description: params.description ?? null,
          created: Math.floor(Date.now() / 1000),
          livemode: false,
          metadata: formMetadata(params),
          reversed: false,
          reversals: { object: 'list', data: [], has_more: false, url: `/v1/transfers/${id}/reversals` },
          transfer_group: params.transfer_group ?? null,
        };
        this.transfers.set(id, transfer);
        body = transfer;
      }
      if (key) this.idempotent.set(key, { params: fingerprint, status, body });
      if (this.drop > 0) {
        this.drop--;
        req.socket.destroy();
        return;
      }
      return send(status, body);
    }
    if (req.method === 'GET' && url.pathname === '/v1/transfers') {
      const group = url.searchParams.get('transfer_group');
      const data = [...this.transfers.values()].filter((t) => !group || t.transfer_group === group).reverse();
      const limit = Number(url.searchParams.get('limit') ?? 10);
      return send(200, {
        object: 'list',
        data: data.slice(0, limit),
        has_more: data.length > limit,
        url: '/v1/transfers',
      });
    }
    const one = /^\/v1\/transfers\/(tr_[a-z0-9]+)$/.exec(url.pathname);
    if (req.method === 'GET' && one) {
      const t = this.transfers.get(one[1]);
      return t
        ? send(200, t)
        : invalid(404, 'invalid_request_error', `No such transfer: '${one[1]}'`, { code: 'resource_missing' });
    }
    return invalid(404, 'invalid_request_error', `Unrecognized request URL (${req.method}: ${url.pathname})`);
  }
}
