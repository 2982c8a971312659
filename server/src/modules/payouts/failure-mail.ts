import type { Logger } from 'pino';
import { Decimal } from 'decimal.js';
import { minorUnitDigits } from '../../attribution/money.js';
import type { AffiliatesService } from '../affiliates/affiliates.service.js';
import type { OrganizationMailer } from '../test-emails/test-emails.js';
import type { PayoutRecord } from './payouts.repository.js';

const RAIL_NAMES: Record<string, string> = { paypal: 'PayPal', stripe: 'Stripe', wise: 'Wise', manual: 'transfer' };

/**
 * Tells a partner that the provider did not pay their payout (shared/spec/payout-rails.md: "tells
 * the partner"), by e-mail, besides the portal's payouts list. Sent once, when the payout becomes
 * `failed` (payout-sender.ts); through the organization's mailer, so that test data's mail is kept,
 * never sent (simulated payouts do not come here either). A mail
 * that cannot be sent is logged: the payout's state does not depend on it.
 */
export function payoutFailureMail(
  affiliates: AffiliatesService,
  mailer: OrganizationMailer,
  logger: Logger,
  portalUrl: string,
) {
  return async (payout: PayoutRecord): Promise<void> => {
    try {
      const affiliate = await affiliates.get(payout.organization_id, payout.affiliate_id);
      const amount = `${new Decimal(String(payout.amount)).toFixed(minorUnitDigits(payout.currency))} ${payout.currency}`;
      await mailer.send(payout.organization_id, {
        to: affiliate.email,
        subject: `Your payout of ${amount} could not be paid`,
        text: [
          `Hello${affiliate.name ? ` ${affiliate.name}` : ''},`,
          '',
          `Your payout of ${amount} sent by ${RAIL_NAMES[payout.method] ?? payout.method} could not be paid.`,
          `Reason: ${payout.failure_reason ?? 'not given'}.`,
          '',
          'Please check your payout details with the merchant (your payout e-mail or account). The commissions it carried are back in your balance and go into the next payout.',
          '',
          `Your payouts: ${portalUrl}`,
        ].join('\n'),
      });
    } catch (err) {
      logger.error({ err, payoutId: payout.id }, 'payout failure e-mail not sent');
    }
  };
}
