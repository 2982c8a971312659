import { Decimal } from 'decimal.js';
import { minorUnitDigits } from '../../../attribution/money.js';
import type { StripeConnectCredentials } from '../../integrations/integrations.service.js';
import {
  call,
  joinUrl,
  lookupOneByOne,
  oneByOne,
  RailRefused,
  type RailBatch,
  type RailClient,
  type RailItem,
  type RailState,
} from './rail.js';

/*
 * Stripe Connect transfers, as documented:
 * - Create a transfer: POST /v1/transfers (amount in the currency's smallest unit, currency,
 *   destination `acct_…`, transfer_group, metadata) https://docs.stripe.com/api/transfers/create
 * - Idempotent requests: the `Idempotency-Key` header; Stripe saves the first result for a key
 *   and answers it again for 24 hours https://docs.stripe.com/api/idempotent_requests
 * - List transfers, filtered by `transfer_group`: GET /v1/transfers https://docs.stripe.com/api/transfers/list
 * - Retrieve a transfer: GET /v1/transfers/{id} (`reversed`, `amount_reversed`) https://docs.stripe.com/api/transfers/retrieve
 * - Events `transfer.created`, `transfer.updated`, `transfer.reversed` https://docs.stripe.com/api/events/types
 * A transfer moves the funds to the connected account's balance when it is created: that is the
 * payout's `paid`. A transfer reversed before we learnt of it is `failed`.
 */

const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a Stripe transfer as Stripe answers it, checked field by field
export function stripeTransferState(payoutId: string, transfer: any): RailState {
  const reference = typeof transfer?.id === 'string' ? transfer.id : null;
  if (transfer?.reversed === true)
    return { payout_id: payoutId, reference, outcome: 'failed', reason: 'Stripe: transfer reversed' };
  return { payout_id: payoutId, reference, outcome: 'paid' };
}

export class StripeTransfers implements RailClient {
  constructor(
    private readonly base: string,
    private readonly credentials: StripeConnectCredentials,
  ) {}

  send(batch: RailBatch): Promise<RailState[]> {
    // Stripe has no batch of transfers: one transfer per payout, each under its own key.
    return oneByOne(batch, (item) => this.transfer(item));
  }

  lookup(batch: RailBatch): Promise<RailState[]> {
    return lookupOneByOne(
      batch,
      async (item, reference) => {
        const answer = await this.request('GET', `/v1/transfers/${encodeURIComponent(reference)}`);
        return answer.status === 200 ? stripeTransferState(item.payout_id, answer.body) : null;
      },
      async (item) => {
        // The answer was lost: ask Stripe for the transfer our key names; none means it never happened.
        const found = await this.request('GET', `/v1/transfers?${form({ transfer_group: item.key, limit: '1' })}`);
        const transfer = found.status === 200 && Array.isArray(found.body?.data) ? found.body.data[0] : undefined;
        return transfer ? stripeTransferState(item.payout_id, transfer) : this.transfer(item);
      },
    );
  }

  private async transfer(item: RailItem): Promise<RailState> {
    const digits = minorUnitDigits(item.currency);
    const answer = await this.request(
      'POST',
      '/v1/transfers',
      form({
        amount: new Decimal(item.amount).times(new Decimal(10).pow(digits)).toFixed(0),
        currency: item.currency.toLowerCase(),
        destination: item.stripe_account_id ?? '',
        transfer_group: item.key,
        description: `Payout ${item.payout_id}`,
        'metadata[payout_id]': item.payout_id,
      }),
      { 'Idempotency-Key': item.key },
    );
    if (answer.status === 200) return stripeTransferState(item.payout_id, answer.body);
    throw new RailRefused(
      `Stripe refused the transfer (${answer.status}): ${String(answer.body?.error?.message ?? answer.body?.error?.code ?? 'no message').slice(0, 300)}`,
    );
  }

  private request(method: string, path: string, body?: string, headers: Record<string, string> = {}) {
    return call(joinUrl(this.base, path), {
      method,
      headers: {
        authorization: `Bearer ${this.credentials.secret_key}`,
        ...(body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
        ...headers,
      },
      ...(body ? { body } : {}),
    });
  }
}
