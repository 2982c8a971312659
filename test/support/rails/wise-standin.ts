import { createSign, generateKeyPairSync, randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { StandInServer, sendJson } from './standin-server.js';

/*
 * A local Wise that speaks the documented API, for tests (https://docs.wise.com/api-docs/api-reference):
 * - POST /v3/profiles/{profileId}/quotes (quote#create-authenticated)
 * - POST /v1/accounts, type `email` (recipient#create-email)
 * - POST /v1/transfers with customerTransactionId (transfer#create): the same id again answers the
 *   transfer already made (idempotency; what Wise answers exactly is not documented)
 * - POST /v3/profiles/{profileId}/transfers/{transferId}/payments `{ type: "BALANCE" }` (transfer#fund)
 * - GET /v1/transfers/{transferId}
 * - webhooks `transfers#state-change` signed with RSA-SHA256 (X-Signature-SHA256), with a key
 *   pair of its own whose public half the test gives the service (WISE_WEBHOOK_PUBLIC_KEY).
 */
export class WiseStandIn extends StandInServer {
  readonly apiToken = randomUUID();
  readonly profileId = String(10_000_000 + Math.floor(Math.random() * 1_000_000));
  readonly transfers = new Map<number, any>();
  readonly transferRequests: any[] = [];
  readonly fundRequests: number[] = [];
  private readonly keys = generateKeyPairSync('rsa', { modulusLength: 2048 });
  readonly publicKeyPem = this.keys.publicKey.export({ type: 'spki', format: 'pem' }).toString();
  private readonly quotes = new Map<string, any>();
  private readonly accounts = new Map<number, any>();
  private nextId = 50_000_000;
  private drop = 0;

  /** The next transfer create is performed, then its answer is lost. */
  dropAnswers(count = 1): void {
    this.drop = count;
  }

  transferOf(customerTransactionId: string): any {
    return [...this.transfers.values()].find((t) => t.customerTransactionId === customerTransactionId);
  }

  setStatus(id: number, status: string): void {
    this.transfers.get(id).status = status;
  }

  /** A transfers#state-change event, signed by this Wise (or by `key`, a forger's). */
  webhook(
    id: number,
    previous: string,
    current: string,
    key = this.keys.privateKey,
  ): { body: string; headers: Record<string, string> } {
    const body = JSON.stringify({
      data: {
        resource: {
          type: 'transfer',
          id,
          profile_id: Number(this.profileId),
          account_id: this.transfers.get(id)?.targetAccount ?? 0,
        },
        current_state: current,
        previous_state: previous,
        occurred_at: new Date().toISOString(),
      },
      subscription_id: randomUUID(),
      event_type: 'transfers#state-change',
      schema_version: '2.0.0',
      sent_at: new Date().toISOString(),
    });
    const signature = createSign('RSA-SHA256').update(body).sign(key, 'base64');
    return {
      body,
      headers: {
        'content-type': 'application/json',
        'x-signature-sha256': signature,
        'x-delivery-id': randomUUID(),
        'x-test-notification': 'false',
      },
    };
  }

  protected async handle(req: IncomingMessage, res: ServerResponse, raw: string): Promise<void> {
    const body = raw ? JSON.parse(raw) : {};
    const url = new URL(req.url ?? '/', this.baseUrl);
    const send = (status: number, payload: unknown) => sendJson(res, status, payload);
    const error = (status: number, code: string, message: string) =>
      send(status, { errors: [{ code, message, arguments: [] }] });
    if (req.headers.authorization !== `Bearer ${this.apiToken}`)
      return send(401, { error: 'invalid_token', error_description: 'Invalid token' });

    if (req.method === 'POST' && url.pathname === `/v3/profiles/${this.profileId}/quotes`) {
      if (!body.sourceCurrency || !body.targetCurrency || !(body.targetAmount > 0 || body.sourceAmount > 0))
        return error(422, 'NOT_VALID', 'Quote needs currencies and an amount');
      const quote = {
        id: randomUUID(),
        sourceCurrency: body.sourceCurrency,
        targetCurrency: body.targetCurrency,
        targetAmount: body.targetAmount,
        rate: 1,
        payOut: body.payOut ?? 'BANK_TRANSFER',
        status: 'PENDING',
      };
      this.quotes.set(quote.id, quote);
      return send(200, quote);
    }
    if (req.method === 'POST' && url.pathname === '/v1/accounts') {
      if (body.type !== 'email' || !body.accountHolderName || !body.details?.email)
        return error(422, 'NOT_VALID', 'Recipient needs type email, accountHolderName, details.email');
      const account = {
        id: this.nextId++,
        profile: body.profile,
        accountHolderName: body.accountHolderName,
        currency: body.currency,
        type: 'email',
        details: body.details,
        active: true,
      };
      this.accounts.set(account.id, account);
      return send(200, account);
    }
    if (req.method === 'POST' && url.pathname === '/v1/transfers') {
      this.transferRequests.push(body);
      if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(body.customerTransactionId ?? ''))
        return error(422, 'NOT_VALID', 'customerTransactionId must be a UUID');
      const existing = this.transferOf(body.customerTransactionId);
      if (existing) return send(200, existing);
      if (!this.quotes.has(body.quoteUuid) || !this.accounts.has(body.targetAccount))
        return error(422, 'NOT_VALID', 'Unknown quote or recipient');
      const quote = this.quotes.get(body.quoteUuid);
      const transfer = {
        id: this.nextId++,
        user: 1,
        targetAccount: body.targetAccount,
        quoteUuid: body.quoteUuid,
        customerTransactionId: body.customerTransactionId,
        status: 'incoming_payment_waiting',
        reference: body.details?.reference ?? '',
        rate: 1,
        created: new Date().toISOString(),
        sourceCurrency: quote.sourceCurrency,
        sourceValue: quote.targetAmount,
        targetCurrency: quote.targetCurrency,
        targetValue: quote.targetAmount,
      };
      this.transfers.set(transfer.id, transfer);
      if (this.drop > 0) {
        this.drop--;
        req.socket.destroy();
        return;
      }
      return send(200, transfer);
    }
    const fund = new RegExp(`^/v3/profiles/${this.profileId}/transfers/(\\d+)/payments$`).exec(url.pathname);
    if (req.method === 'POST' && fund) {
      const transfer = this.transfers.get(Number(fund[1]));
      if (!transfer) return error(404, 'NOT_FOUND', 'Transfer not found');
      if (body.type !== 'BALANCE') return error(422, 'NOT_VALID', 'type must be BALANCE');
      this.fundRequests.push(transfer.id);
      if (transfer.status !== 'incoming_payment_waiting')
        return error(409, 'transfer.already.funded', 'Transfer is already funded');
      transfer.status = 'processing';
      return send(201, { type: 'BALANCE', status: 'COMPLETED', errorCode: null });
    }
    const one = /^\/v1\/transfers\/(\d+)$/.exec(url.pathname);
    if (req.method === 'GET' && one) {
      const transfer = this.transfers.get(Number(one[1]));
      return transfer ? send(200, transfer) : error(404, 'NOT_FOUND', 'Transfer not found');
    }
    return error(404, 'NOT_FOUND', `No route ${req.method} ${url.pathname}`);
  }
}
