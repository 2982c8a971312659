import type { PayPalCredentials } from '../../integrations/integrations.service.js';
import { PayPalTokens, type IssuedToken, type TokenScope } from './paypal-tokens.js';
import {
  call,
  joinUrl,
  RailRefused,
  RailUnreachable,
  type RailBatch,
  type RailClient,
  type RailItem,
  type RailState,
} from './rail.js';

/*
 * PayPal Payouts v1, as documented:
 * - OAuth 2.0 client credentials: https://developer.paypal.com/api/rest/authentication/
 *   (POST /v1/oauth2/token, Basic client_id:secret, grant_type=client_credentials)
 * - Create batch payout: https://developer.paypal.com/docs/api/payments.payouts-batch/v1/#payouts_post
 *   sender_batch_header.sender_batch_id: "PayPal does not process duplicate payouts. If you specify
 *   a sender_batch_id that was used in the last 30 days, the API rejects the request with an error
 *   message that shows the duplicate sender_batch_id and includes a HATEOAS link to the original
 *   payout ... If you receive an HTTP 5nn status code, you can safely retry the request with the
 *   same sender_batch_id." (definitions/sender_batch_header)
 * - Show payout batch details: GET /v1/payments/payouts/{payout_batch_id}
 *   https://developer.paypal.com/docs/api/payments.payouts-batch/v1/#payouts_get
 * - Show payout item details: GET /v1/payments/payouts-item/{payout_item_id}
 *   https://developer.paypal.com/docs/api/payments.payouts-batch/v1/#payouts-item_get
 * - Item transaction_status: SUCCESS, FAILED, PENDING, UNCLAIMED, RETURNED, ONHOLD, BLOCKED,
 *   REFUNDED, REVERSED (https://developer.paypal.com/docs/api/payments.payouts-batch/v1/#definition-payout_transaction_status)
 */

/** Item statuses that end a payout unpaid (UNCLAIMED waits: PayPal returns it after 30 days, then RETURNED). */
const FAILED_STATUSES = new Set(['FAILED', 'RETURNED', 'BLOCKED', 'REFUNDED', 'REVERSED']);

export function paypalItemOutcome(transactionStatus: string | undefined): RailState['outcome'] {
  if (transactionStatus === 'SUCCESS') return 'paid';
  if (transactionStatus && FAILED_STATUSES.has(transactionStatus)) return 'failed';
  return 'processing';
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a PayPal payout item as PayPal answers it, checked field by field
export function paypalFailureReason(item: any): string {
  const status = String(item?.transaction_status ?? 'FAILED');
  const error = item?.errors?.name
    ? ` (${String(item.errors.name)}${item.errors.message ? `: ${String(item.errors.message).slice(0, 300)}` : ''})`
    : '';
  return `PayPal: ${status}${error}`;
}

/** One item of a batch (from a batch's `items`, an item's details, or a webhook's `resource`) as our state. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a PayPal payout item as PayPal answers it, checked field by field
export function paypalItemState(item: any): RailState | undefined {
  const payoutId = item?.payout_item?.sender_item_id;
  if (typeof payoutId !== 'string') return undefined;
  const outcome = paypalItemOutcome(item.transaction_status);
  return {
    payout_id: payoutId,
    reference: item.payout_batch_id && item.payout_item_id ? `${item.payout_batch_id}/${item.payout_item_id}` : null,
    outcome,
    ...(outcome === 'failed' ? { reason: paypalFailureReason(item) } : {}),
  };
}

/*
 * What the partner reads in PayPal's e-mail: email_subject is "up to 255 single-byte characters"
 * and the same for every recipient of the batch (definitions/sender_batch_header); the item notes
 * are concatenated with the batch's into at most 1000 characters (the batch sends none).
 */
const SUBJECT_MAX = 255;
const NOTE_MAX = 1000;

const clip = (text: string, max: number) => (text.length <= max ? text : `${text.slice(0, max - 1)}…`);

/** The batch's subject: the program's name when every payout of the batch is of one program. */
export function paypalSubject(batch: RailBatch): string {
  const programs = new Set(batch.items.map((i) => i.program_name));
  if (programs.size !== 1) return 'You have a payout for your referrals';
  return clip(`You have a payout from ${[...programs][0]}`, SUBJECT_MAX);
}

/** The item's note: the program it pays for, and the payout's id (which the merchant's dashboard shows). */
export function paypalNote(item: RailItem): string {
  const id = ` (payout ${item.payout_id})`;
  return `${clip(`Referral commissions from ${item.program_name}`, NOTE_MAX - id.length)}${id}`;
}

/** The first href in an error body that names a payout batch (the duplicate sender_batch_id's link to the original). */
function originalBatchId(body: unknown): string | undefined {
  const match = /\/v1\/payments\/payouts\/([A-Za-z0-9_-]+)/.exec(JSON.stringify(body ?? ''));
  return match?.[1];
}

/** A webhook's transmission headers, as verify-webhook-signature takes them (checked first by webhooks/paypal-transmission.ts). */
export interface PayPalTransmission {
  auth_algo: string;
  cert_url: string;
  transmission_id: string;
  transmission_sig: string;
  transmission_time: string;
}

export class PayPalPayouts implements RailClient {
  private readonly scope: TokenScope;

  /**
   * `tokens`: the instance's token cache (payout-sender.ts holds one for every organization), so
   * that calls for one organization share a token until it expires; `organizationId` scopes it.
   */
  constructor(
    private readonly base: string,
    private readonly credentials: PayPalCredentials,
    private readonly tokens: PayPalTokens = new PayPalTokens(),
    organizationId = '',
  ) {
    this.scope = { organizationId, base, credentials };
  }

  async send(batch: RailBatch): Promise<RailState[]> {
    const senderBatchId = batch.items[0].key;
    const created = await this.authorized('POST', '/v1/payments/payouts', {
      body: {
        sender_batch_header: {
          sender_batch_id: senderBatchId,
          recipient_type: 'EMAIL',
          email_subject: paypalSubject(batch),
          email_message: 'You received a payout for your referrals.',
        },
        items: batch.items.map((item) => ({
          recipient_type: 'EMAIL',
          amount: { value: item.amount, currency: item.currency },
          receiver: item.email,
          sender_item_id: item.payout_id,
          note: paypalNote(item),
        })),
      },
      // PayPal also keeps request ids for 30 days: a repeated request answers the first one's result.
      headers: { 'PayPal-Request-Id': senderBatchId },
    });
    if (created.status === 201 || created.status === 200) return this.fromBatchAnswer(batch, created.body);
    const original = originalBatchId(created.body);
    if (original) return this.batchStates(batch, original);
    throw new RailRefused(`PayPal refused the batch (${created.status}): ${describe(created.body)}`);
  }

  async lookup(batch: RailBatch): Promise<RailState[]> {
    const batchId = batch.items.map((i) => i.reference?.split('/')[0]).find((id): id is string => !!id);
    // Never answered: sent again with the same sender_batch_id, which PayPal pays at most once
    // (a duplicate is refused with a link to the original batch, read instead).
    if (!batchId) {
      try {
        return await this.send(batch);
      } catch (err) {
        // A repeat's refusal does not say the first attempt failed: the outcome stays unknown.
        if (err instanceof RailRefused)
          throw new RailUnreachable(
            `PayPal refused the repeat of ${batch.items[0].key}, outcome unknown: ${err.message}`,
          );
        throw err;
      }
    }
    return this.batchStates(batch, batchId);
  }

  /** One item's details (GET /v1/payments/payouts-item/{payout_item_id}); undefined when PayPal does not answer it. */
  async item(payoutItemId: string): Promise<unknown> {
    const answer = await this.authorized('GET', `/v1/payments/payouts-item/${encodeURIComponent(payoutItemId)}`);
    return answer.status === 200 ? answer.body : undefined;
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- PayPal's batch answer, checked field by field
  private fromBatchAnswer(batch: RailBatch, body: any): RailState[] {
    const batchId = body?.batch_header?.payout_batch_id;
    if (typeof batchId !== 'string') throw new RailUnreachable('PayPal answered without batch_header.payout_batch_id');
    const items = Array.isArray(body?.items) ? body.items : [];
    return this.statesOf(batch, batchId, body?.batch_header?.batch_status, items);
  }

  private async batchStates(batch: RailBatch, batchId: string): Promise<RailState[]> {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- PayPal's payout items, checked field by field
    const items: any[] = [];
    let status: string | undefined;
    for (let page = 1; page <= 100; page++) {
      const answer = await this.authorized(
        'GET',
        `/v1/payments/payouts/${encodeURIComponent(batchId)}?page=${page}&page_size=1000&total_required=true`,
      );
      if (answer.status !== 200)
        throw new RailUnreachable(`PayPal: batch ${batchId}: ${answer.status} ${describe(answer.body)}`);
      status = answer.body?.batch_header?.batch_status;
      const pageItems = Array.isArray(answer.body?.items) ? answer.body.items : [];
      items.push(...pageItems);
      const pages = Number(answer.body?.total_pages ?? 1);
      if (pageItems.length === 0 || !(page < pages)) break;
    }
    return this.statesOf(batch, batchId, status, items);
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- PayPal's payout items, checked field by field
  private statesOf(batch: RailBatch, batchId: string, batchStatus: string | undefined, items: any[]): RailState[] {
    const byPayout = new Map(items.map((item) => [item?.payout_item?.sender_item_id, item]));
    return batch.items.map((mine: RailItem): RailState => {
      const item = byPayout.get(mine.payout_id);
      if (item) return paypalItemState({ ...item, payout_batch_id: item.payout_batch_id ?? batchId })!;
      // A batch PayPal denied pays none of its items.
      if (batchStatus === 'DENIED')
        return { payout_id: mine.payout_id, reference: batchId, outcome: 'failed', reason: 'PayPal: batch DENIED' };
      return {
        payout_id: mine.payout_id,
        reference: mine.reference?.includes('/') ? mine.reference : batchId,
        outcome: 'processing',
      };
    });
  }

  /**
   * A call with the organization's token. PayPal answering 401 means the token is no longer good
   * (revoked, expired early): it is forgotten and the call made once more with a new one.
   */
  private async authorized(
    method: string,
    path: string,
    options: { body?: unknown; headers?: Record<string, string> } = {},
  ) {
    const attempt = async () => {
      const token = await this.tokens.token(this.scope, () => this.issueToken());
      const answer = await call(joinUrl(this.base, path), {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          accept: 'application/json',
          ...options.headers,
        },
        ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
      });
      if (answer.status === 401) this.tokens.invalidate(this.scope, token);
      return answer;
    };
    const first = await attempt();
    return first.status === 401 ? attempt() : first;
  }

  /**
   * Whether PayPal takes these credentials: one token call of its own, outside the cache (a token
   * cached for the same credentials would say nothing of a secret rotated since). Throws
   * RailRefused with PayPal's reason, or RailUnreachable.
   */
  async checkCredentials(): Promise<{ refused: string } | undefined> {
    const answer = await this.requestToken();
    if (answer.status === 200 && typeof answer.body?.access_token === 'string') return undefined;
    const error = typeof answer.body?.error === 'string' ? `${answer.body.error}: ` : '';
    return { refused: `${answer.status} ${error}${describe(answer.body)}` };
  }

  /** POST /v1/oauth2/token with the client credentials: only when the cache holds no valid token for them. */
  private async issueToken(): Promise<IssuedToken> {
    const answer = await this.requestToken();
    if (answer.status !== 200 || typeof answer.body?.access_token !== 'string') {
      throw new RailRefused(
        `PayPal refused the paypal_payouts credentials (${answer.status}): ${describe(answer.body)}`,
      );
    }
    const expiresIn = Number(answer.body.expires_in);
    return { value: answer.body.access_token, expiresInSeconds: Number.isFinite(expiresIn) ? expiresIn : 0 };
  }

  private requestToken() {
    const basic = Buffer.from(`${this.credentials.client_id}:${this.credentials.client_secret}`).toString('base64');
    return call(joinUrl(this.base, '/v1/oauth2/token'), {
      method: 'POST',
      headers: {
        authorization: `Basic ${basic}`,
        'content-type': 'application/x-www-form-urlencoded',
        accept: 'application/json',
      },
      body: 'grant_type=client_credentials',
    });
  }

  /** PayPal's verify-webhook-signature (https://developer.paypal.com/docs/api/webhooks/v1/#verify-webhook-signature_post). */
  async verifyWebhook(transmission: PayPalTransmission, event: unknown, webhookId: string): Promise<boolean> {
    const answer = await this.authorized('POST', '/v1/notifications/verify-webhook-signature', {
      body: {
        auth_algo: transmission.auth_algo,
        cert_url: transmission.cert_url,
        transmission_id: transmission.transmission_id,
        transmission_sig: transmission.transmission_sig,
        transmission_time: transmission.transmission_time,
        webhook_id: webhookId,
        webhook_event: event,
      },
    });
    return answer.status === 200 && answer.body?.verification_status === 'SUCCESS';
  }
}

export function describe(body: unknown): string {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- PayPal's error answer, whatever its shape
  const b = body as any;
  const text = b?.message ?? b?.error_description ?? b?.error?.message ?? b?.name ?? JSON.stringify(body ?? null);
  return String(text).slice(0, 300);
}
