import { createHash, createHmac, randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { StandInServer, sendJson } from './standin-server.js';

/*
 * A local PayPal that speaks the Payouts v1 API as PayPal documents it, for tests:
 * - POST /v1/oauth2/token (Basic client_id:secret, grant_type=client_credentials)
 *   https://developer.paypal.com/api/rest/authentication/
 * - POST /v1/payments/payouts, GET /v1/payments/payouts/{payout_batch_id},
 *   GET /v1/payments/payouts-item/{payout_item_id}
 *   https://developer.paypal.com/docs/api/payments.payouts-batch/v1/
 *   A sender_batch_id used before is refused (400) with a link to the original batch, as
 *   definitions/sender_batch_header says; a repeated PayPal-Request-Id answers the first result.
 * - POST /v1/notifications/verify-webhook-signature
 *   https://developer.paypal.com/docs/api/webhooks/v1/#verify-webhook-signature_post
 * Item states are set by the test (setItem); webhooks are produced by the test (webhookFor),
 * signed with a secret only this stand-in knows, so only they verify.
 */

export interface StandInItem {
  payout_item_id: string;
  transaction_status: string;
  payout_batch_id: string;
  payout_item: {
    recipient_type: string;
    amount: { value: string; currency: string };
    receiver: string;
    sender_item_id: string;
    note?: string;
  };
  errors?: { name: string; message: string };
  time_processed?: string;
}

interface StandInBatch {
  /** A denied batch is answered without items (none was processed). */
  denied?: boolean;
  payout_batch_id: string;
  batch_status: string;
  sender_batch_header: Record<string, unknown>;
  items: StandInItem[];
  time_created: string;
}

const paypalId = () =>
  randomBytes(10)
    .toString('base64')
    .replace(/[^A-Z0-9]/gi, '')
    .toUpperCase()
    .padEnd(13, 'X')
    .slice(0, 13);

export class PayPalStandIn extends StandInServer {
  readonly clientId = `client-${paypalId()}`;
  /** Changed by rotateSecret (tokens issued before stay valid until they expire, as PayPal's do). */
  clientSecret = `secret-${paypalId()}`;
  readonly webhookId = `WH-${paypalId()}`;
  readonly batches = new Map<string, StandInBatch>();
  /** Every create request received (answered or not). */
  readonly createRequests: any[] = [];
  /** Every request received, as `METHOD /path` (e.g. `POST /v1/oauth2/token`), answered or not. */
  readonly calls: string[] = [];
  /** `expires_in` of the tokens issued from now on (PayPal's are good for 9 hours). */
  tokenLifetimeSeconds = 32400;
  /** Answer every request with this status and error for the next N creates (5xx: "retry with the same sender_batch_id"). */
  private dropCreates = 0;
  private readonly requestIds = new Map<string, { status: number; body: unknown }>();
  private readonly tokens = new Set<string>();
  private readonly webhookSecret = randomBytes(32);
  private readonly holds = new Map<'token' | 'create', { arrived: () => void; released: Promise<void> }>();
  private readonly releases = new Set<() => void>();

  /** How many requests reached `METHOD /path` (e.g. `POST /v1/oauth2/token`). */
  callsTo(route: string): number {
    return this.calls.filter((c) => c === route).length;
  }

  /** Every token issued so far stops working (PayPal answers 401 with them), as when PayPal revokes them. */
  revokeTokens(): void {
    this.tokens.clear();
  }

  /** A new client secret: the old one is refused from now on (the merchant rotated it in the PayPal app). */
  rotateSecret(): string {
    this.clientSecret = `secret-${paypalId()}`;
    return this.clientSecret;
  }

  /** The next `count` creates are performed, then the connection is dropped before any answer (a lost answer). */
  dropAnswers(count = 1): void {
    this.dropCreates = count;
  }

  /**
   * The next request to `route` (the OAuth token call, or a batch create) is held: received (a
   * create is performed, as PayPal would) but not answered until `release()`. `arrived` resolves
   * once it is held, so a test can act (kill the caller) while it waits for PayPal.
   */
  holdNext(route: 'token' | 'create'): { arrived: Promise<void>; release: () => void } {
    let arrived!: () => void;
    let release!: () => void;
    const arrival = new Promise<void>((resolve) => (arrived = resolve));
    const released = new Promise<void>((resolve) => (release = resolve));
    this.releases.add(release);
    this.holds.set(route, { arrived, released });
    return { arrived: arrival, release };
  }

  /** Where a held request waits (and what `stop` releases). */
  private async holdPoint(route: 'token' | 'create'): Promise<void> {
    const hold = this.holds.get(route);
    if (!hold) return;
    this.holds.delete(route);
    hold.arrived();
    await hold.released;
  }

  override async stop(): Promise<void> {
    for (const release of this.releases) release();
    await super.stop();
  }

  item(senderItemId: string): StandInItem | undefined {
    for (const batch of this.batches.values())
      for (const item of batch.items) if (item.payout_item.sender_item_id === senderItemId) return item;
    return undefined;
  }

  /** Sets an item's transaction_status (and errors), as PayPal would once it processed it. */
  setItem(senderItemId: string, status: string, errors?: { name: string; message: string }): StandInItem {
    const item = this.item(senderItemId);
    if (!item) throw new Error(`no item ${senderItemId}`);
    item.transaction_status = status;
    item.time_processed = new Date().toISOString();
    if (errors) item.errors = errors;
    const batch = this.batches.get(item.payout_batch_id)!;
    if (batch.items.every((i) => i.transaction_status !== 'PENDING')) batch.batch_status = 'SUCCESS';
    return item;
  }

  /** PayPal denies the batch holding this item (PAYMENT.PAYOUTSBATCH.DENIED): nothing in it is paid. */
  denyBatch(senderItemId: string): StandInBatch {
    const batch = this.batches.get(this.item(senderItemId)!.payout_batch_id)!;
    batch.batch_status = 'DENIED';
    batch.denied = true;
    return batch;
  }

  /** A PAYMENT.PAYOUTSBATCH.<suffix> event for the batch, signed like the item events. */
  batchWebhookFor(batchId: string, suffix: string): { headers: Record<string, string>; body: string } {
    const batch = this.batches.get(batchId)!;
    const view = this.batchView(batch);
    return this.signed({
      id: `WH-${paypalId()}-${paypalId()}`,
      event_version: '1.0',
      create_time: new Date().toISOString(),
      resource_type: 'payouts',
      event_type: `PAYMENT.PAYOUTSBATCH.${suffix}`,
      summary: `Payouts batch ${suffix.toLowerCase()}`,
      resource: { batch_header: view.batch_header, links: view.links },
      links: [],
    });
  }

  /** A PAYMENT.PAYOUTS-ITEM.<suffix> event for the item, with transmission headers that this stand-in will verify. */
  webhookFor(
    senderItemId: string,
    suffix: string,
    options: { bare?: boolean } = {},
  ): { headers: Record<string, string>; body: string } {
    const found = this.item(senderItemId)!;
    // `bare`: the resource as a minimal event carries it, without the original payout_item.
    const item = options.bare
      ? {
          payout_item_id: found.payout_item_id,
          payout_batch_id: found.payout_batch_id,
          transaction_status: found.transaction_status,
        }
      : found;
    const event = {
      id: `WH-${paypalId()}-${paypalId()}`,
      event_version: '1.0',
      create_time: new Date().toISOString(),
      resource_type: 'payouts_item',
      event_type: `PAYMENT.PAYOUTS-ITEM.${suffix}`,
      summary: `A payout item has ${suffix.toLowerCase()}`,
      resource: { ...item, links: [] },
      links: [],
    };
    return this.signed(event);
  }

  private signed(event: { id: string } & Record<string, unknown>): { headers: Record<string, string>; body: string } {
    const transmissionId = randomBytes(16).toString('hex');
    const time = new Date().toISOString();
    return {
      body: JSON.stringify(event),
      headers: {
        'content-type': 'application/json',
        'paypal-transmission-id': transmissionId,
        'paypal-transmission-time': time,
        'paypal-transmission-sig': this.signature(transmissionId, time, event),
        'paypal-cert-url': 'https://api-m.sandbox.paypal.com/v1/notifications/certs/CERT-360caa42-fca2a594-a5cafa77',
        'paypal-auth-algo': 'SHA256withRSA',
      },
    };
  }

  /** Over the transmission and the event's content (PayPal's own covers a CRC32 of the body), so an altered event fails too. */
  private signature(transmissionId: string, time: string, event: unknown): string {
    const digest = createHash('sha256').update(JSON.stringify(event)).digest('hex');
    return createHmac('sha256', this.webhookSecret)
      .update(`${transmissionId}|${time}|${this.webhookId}|${digest}`)
      .digest('base64');
  }

  private batchView(batch: StandInBatch) {
    const total = batch.items.reduce((sum, i) => sum + Number(i.payout_item.amount.value), 0);
    return {
      batch_header: {
        payout_batch_id: batch.payout_batch_id,
        batch_status: batch.batch_status,
        time_created: batch.time_created,
        sender_batch_header: batch.sender_batch_header,
        funding_source: 'BALANCE',
        amount: { currency: batch.items[0].payout_item.amount.currency, value: total.toFixed(2) },
      },
      items: (batch.denied ? [] : batch.items).map((i) => ({
        ...i,
        links: [
          {
            href: `${this.baseUrl}/v1/payments/payouts-item/${i.payout_item_id}`,
            rel: 'item',
            method: 'GET',
            encType: 'application/json',
          },
        ],
      })),
      links: [
        {
          href: `${this.baseUrl}/v1/payments/payouts/${batch.payout_batch_id}?page_size=1000&page=1`,
          rel: 'self',
          method: 'GET',
          encType: 'application/json',
        },
      ],
    };
  }

  protected async handle(req: IncomingMessage, res: ServerResponse, raw: string): Promise<void> {
    const url = new URL(req.url ?? '/', this.baseUrl);
    this.calls.push(`${req.method} ${url.pathname}`);
    const send = (status: number, body: unknown) => sendJson(res, status, body);
    const error = (status: number, name: string, message: string, extra: Record<string, unknown> = {}) =>
      send(status, {
        name,
        message,
        debug_id: paypalId().toLowerCase(),
        information_link: 'https://developer.paypal.com/docs/api/payments.payouts-batch/#errors',
        ...extra,
      });

    if (req.method === 'POST' && url.pathname === '/v1/oauth2/token') {
      const expected = `Basic ${Buffer.from(`${this.clientId}:${this.clientSecret}`).toString('base64')}`;
      if (req.headers.authorization !== expected)
        return send(401, { error: 'invalid_client', error_description: 'Client Authentication failed' });
      if (new URLSearchParams(raw).get('grant_type') !== 'client_credentials')
        return send(400, { error: 'unsupported_grant_type', error_description: 'Grant Type is NULL' });
      await this.holdPoint('token');
      if (res.destroyed) return;
      const token = `A21AA${randomBytes(24).toString('hex')}`;
      this.tokens.add(token);
      return send(200, {
        scope: 'https://uri.paypal.com/services/payments/payouts',
        access_token: token,
        token_type: 'Bearer',
        app_id: 'APP-80W284485P519543T',
        expires_in: this.tokenLifetimeSeconds,
        nonce: paypalId(),
      });
    }
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (!bearer || !this.tokens.has(bearer))
      return error(
        401,
        'AUTHENTICATION_FAILURE',
        'Authentication failed due to invalid authentication credentials or a missing Authorization header.',
      );

    if (req.method === 'POST' && url.pathname === '/v1/payments/payouts') {
      const body = JSON.parse(raw || '{}');
      this.createRequests.push(body);
      const requestId = req.headers['paypal-request-id'] as string | undefined;
      if (requestId && this.requestIds.has(requestId)) {
        const first = this.requestIds.get(requestId)!;
        return send(first.status, first.body);
      }
      const header = body.sender_batch_header;
      const items = body.items;
      if (!header || typeof header.sender_batch_id !== 'string' || !Array.isArray(items) || items.length === 0) {
        return error(400, 'VALIDATION_ERROR', 'Invalid request - see details.', {
          details: [{ field: 'sender_batch_header', location: 'body', issue: 'MISSING_REQUIRED_PARAMETER' }],
        });
      }
      for (const item of items) {
        const type = item.recipient_type ?? header.recipient_type;
        if (
          type !== 'EMAIL' ||
          typeof item.receiver !== 'string' ||
          typeof item.amount?.value !== 'string' ||
          !/^\d+(\.\d{1,2})?$/.test(item.amount.value) ||
          typeof item.amount?.currency !== 'string'
        ) {
          return error(400, 'VALIDATION_ERROR', 'Invalid request - see details.', {
            details: [{ field: 'items', location: 'body', issue: 'INVALID_PARAMETER_SYNTAX' }],
          });
        }
      }
      const duplicate = [...this.batches.values()].find(
        (b) => b.sender_batch_header.sender_batch_id === header.sender_batch_id,
      );
      if (duplicate) {
        return error(400, 'USER_BUSINESS_ERROR', 'User business error.', {
          details: [
            { field: 'SENDER_BATCH_ID', location: 'body', issue: `Batch with given sender_batch_id already exists` },
          ],
          links: [
            {
              href: `${this.baseUrl}/v1/payments/payouts/${duplicate.payout_batch_id}`,
              rel: 'self',
              method: 'GET',
              encType: 'application/json',
            },
          ],
        });
      }
      const batchId = paypalId();
      const batch: StandInBatch = {
        payout_batch_id: batchId,
        batch_status: 'PENDING',
        sender_batch_header: header,
        time_created: new Date().toISOString(),
        items: items.map((item: any) => ({
          payout_item_id: paypalId(),
          transaction_status: 'PENDING',
          payout_batch_id: batchId,
          payout_item: {
            recipient_type: item.recipient_type ?? header.recipient_type,
            amount: item.amount,
            receiver: item.receiver,
            sender_item_id: item.sender_item_id,
            note: item.note,
          },
        })),
      };
      this.batches.set(batchId, batch);
      const answer = {
        batch_header: { payout_batch_id: batchId, batch_status: 'PENDING', sender_batch_header: header },
        links: [
          {
            href: `${this.baseUrl}/v1/payments/payouts/${batchId}`,
            rel: 'self',
            method: 'GET',
            encType: 'application/json',
          },
        ],
      };
      if (requestId) this.requestIds.set(requestId, { status: 201, body: answer });
      await this.holdPoint('create');
      if (res.destroyed) return;
      if (this.dropCreates > 0) {
        this.dropCreates--;
        // Performed, answer lost: the connection ends without a response.
        req.socket.destroy();
        return;
      }
      return send(201, answer);
    }
    const batchMatch = /^\/v1\/payments\/payouts\/([A-Z0-9]+)$/.exec(url.pathname);
    if (req.method === 'GET' && batchMatch) {
      const batch = this.batches.get(batchMatch[1]);
      if (!batch) return error(404, 'INVALID_RESOURCE_ID', 'Requested resource ID was not found.');
      return send(200, this.batchView(batch));
    }
    const itemMatch = /^\/v1\/payments\/payouts-item\/([A-Z0-9]+)$/.exec(url.pathname);
    if (req.method === 'GET' && itemMatch) {
      for (const batch of this.batches.values()) {
        const item = batch.items.find((i) => i.payout_item_id === itemMatch[1]);
        if (item) return send(200, { ...item, links: [] });
      }
      return error(404, 'INVALID_RESOURCE_ID', 'Requested resource ID was not found.');
    }
    if (req.method === 'POST' && url.pathname === '/v1/notifications/verify-webhook-signature') {
      const body = JSON.parse(raw || '{}');
      for (const field of [
        'auth_algo',
        'cert_url',
        'transmission_id',
        'transmission_sig',
        'transmission_time',
        'webhook_id',
        'webhook_event',
      ]) {
        if (!body[field])
          return error(400, 'VALIDATION_ERROR', 'Invalid request - see details.', {
            details: [{ field, location: 'body', issue: 'MISSING_REQUIRED_PARAMETER' }],
          });
      }
      const expected = this.signature(body.transmission_id, body.transmission_time, body.webhook_event);
      const ok = body.webhook_id === this.webhookId && body.transmission_sig === expected;
      return send(200, { verification_status: ok ? 'SUCCESS' : 'FAILURE' });
    }
    return error(404, 'NOT_FOUND', `No route ${req.method} ${url.pathname}`);
  }
}
