import type { WiseCredentials } from '../../integrations/integrations.service.js';
import {
  call,
  joinUrl,
  lookupOneByOne,
  oneByOne,
  RailRefused,
  RailUnreachable,
  type RailBatch,
  type RailClient,
  type RailItem,
  type RailState,
} from './rail.js';

/*
 * Wise, as documented (https://docs.wise.com/api-docs/api-reference):
 * - Quote: POST /v3/profiles/{profileId}/quotes https://docs.wise.com/api-docs/api-reference/quote#create-authenticated
 * - Recipient by e-mail: POST /v1/accounts (type `email`, accountHolderName, details.email)
 *   https://docs.wise.com/api-docs/api-reference/recipient#create-email
 * - Transfer: POST /v1/transfers (targetAccount, quoteUuid, customerTransactionId: "required to
 *   perform idempotency check to avoid duplicate transfers in case of network failures or
 *   timeouts") https://docs.wise.com/api-docs/api-reference/transfer#create
 * - Fund from the balance: POST /v3/profiles/{profileId}/transfers/{transferId}/payments
 *   `{ type: "BALANCE" }` https://docs.wise.com/api-docs/api-reference/transfer#fund
 * - Transfer status: GET /v1/transfers/{transferId}; statuses
 *   https://docs.wise.com/api-docs/guides/send-money/tracking (outgoing_payment_sent: paid;
 *   bounced_back, funds_refunded, cancelled, charged_back: not paid)
 * Batch groups would fund many transfers at once; they are not used: one transfer per payout,
 * each under its own customerTransactionId, funded one by one.
 * Not knowable from the documentation: exactly what Wise answers to a second transfer with the
 * same customerTransactionId. This client expects the existing transfer (2xx); a refusal of a
 * repeat leaves the payout `processing` (unknown, logged) rather than failing a payout whose money
 * may have moved.
 */

const FAILED = new Set(['bounced_back', 'funds_refunded', 'cancelled', 'charged_back']);

export function wiseTransferState(
  payoutId: string,
  transferId: string | number,
  status: string | undefined,
): RailState {
  const reference = String(transferId);
  if (status === 'outgoing_payment_sent') return { payout_id: payoutId, reference, outcome: 'paid' };
  if (status && FAILED.has(status))
    return { payout_id: payoutId, reference, outcome: 'failed', reason: `Wise: ${status}` };
  return { payout_id: payoutId, reference, outcome: 'processing' };
}

export class WiseTransfers implements RailClient {
  constructor(
    private readonly base: string,
    private readonly credentials: WiseCredentials,
  ) {}

  send(batch: RailBatch): Promise<RailState[]> {
    return oneByOne(batch, (item) => this.transfer(item));
  }

  lookup(batch: RailBatch): Promise<RailState[]> {
    return lookupOneByOne(
      batch,
      async (item, reference) => {
        const answer = await this.request('GET', `/v1/transfers/${encodeURIComponent(reference)}`);
        return answer.status === 200 ? wiseTransferState(item.payout_id, reference, answer.body?.status) : null;
      },
      // The answer was lost: the same customerTransactionId again, which Wise answers with the transfer it already made.
      (item) => unknownIfRefused(this.transfer(item)),
    );
  }

  private async transfer(item: RailItem): Promise<RailState> {
    const profile = this.credentials.profile_id;
    const quote = await this.request('POST', `/v3/profiles/${profile}/quotes`, {
      sourceCurrency: item.currency,
      targetCurrency: item.currency,
      targetAmount: Number(item.amount),
      payOut: 'BALANCE',
    });
    if (quote.status >= 300 || !quote.body?.id)
      throw new RailRefused(`Wise refused the quote (${quote.status}): ${message(quote.body)}`);
    const recipient = await this.request('POST', '/v1/accounts', {
      profile: Number(profile),
      accountHolderName: item.name,
      currency: item.currency,
      type: 'email',
      details: { email: item.email },
    });
    if (recipient.status >= 300 || recipient.body?.id === undefined)
      throw new RailRefused(`Wise refused the recipient (${recipient.status}): ${message(recipient.body)}`);
    const transfer = await this.request('POST', '/v1/transfers', {
      targetAccount: recipient.body.id,
      quoteUuid: quote.body.id,
      customerTransactionId: item.key,
      details: { reference: 'Payout' },
    });
    if (transfer.status >= 300 || transfer.body?.id === undefined)
      throw new RailRefused(`Wise refused the transfer (${transfer.status}): ${message(transfer.body)}`);
    const transferId = String(transfer.body.id);
    if (transfer.body.status && transfer.body.status !== 'incoming_payment_waiting')
      return wiseTransferState(item.payout_id, transferId, transfer.body.status);
    const funded = await this.request('POST', `/v3/profiles/${profile}/transfers/${transferId}/payments`, {
      type: 'BALANCE',
    });
    if (funded.status < 300 && funded.body?.status === 'REJECTED') {
      return {
        payout_id: item.payout_id,
        reference: transferId,
        outcome: 'failed',
        reason: `Wise: funding rejected (${String(funded.body.errorCode ?? 'no code')})`,
      };
    }
    if (funded.status >= 300) {
      // Funded before (a repeat after a lost answer) or refused: the transfer's own status says which.
      const current = await this.request('GET', `/v1/transfers/${transferId}`);
      if (current.status !== 200) throw new RailUnreachable(`Wise: transfer ${transferId}: ${current.status}`);
      if (current.body?.status === 'incoming_payment_waiting')
        return {
          payout_id: item.payout_id,
          reference: transferId,
          outcome: 'failed',
          reason: `Wise: funding refused (${message(funded.body)})`,
        };
      return wiseTransferState(item.payout_id, transferId, current.body?.status);
    }
    return { payout_id: item.payout_id, reference: transferId, outcome: 'processing' };
  }

  private request(method: string, path: string, body?: unknown) {
    return call(joinUrl(this.base, path), {
      method,
      headers: {
        authorization: `Bearer ${this.credentials.api_token}`,
        'content-type': 'application/json',
        accept: 'application/json',
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  }
}

/** A repeat's refusal does not say the first attempt failed: the outcome stays unknown. */
async function unknownIfRefused<T>(attempt: Promise<T>): Promise<T> {
  try {
    return await attempt;
  } catch (err) {
    if (err instanceof RailRefused) throw new RailUnreachable(`repeat refused, outcome unknown: ${err.message}`);
    throw err;
  }
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- Wise's error answer, whatever its shape
function message(body: any): string {
  return String(body?.errors?.[0]?.message ?? body?.message ?? body?.error ?? JSON.stringify(body ?? null)).slice(
    0,
    300,
  );
}
