import type { Logger } from 'pino';
import { Decimal } from 'decimal.js';
import { minorUnitDigits } from '../../attribution/money.js';
import type { AffiliatesService } from '../affiliates/affiliates.service.js';
import { partnerMail, portalUrlOf, type ProgramOfMail } from '../partners/mail-layout.js';
import type { OrganizationMailer } from '../test-emails/test-emails.js';
import type { PayoutRecord } from './payouts.repository.js';

const RAIL_NAMES: Record<string, string> = { paypal: 'PayPal', stripe: 'Stripe', wise: 'Wise', manual: 'transfer' };

/** A payout's amount as the e-mails write it: `33.00 USD`. */
export const payoutAmountText = (payout: Pick<PayoutRecord, 'amount' | 'currency'>): string =>
  `${new Decimal(String(payout.amount)).toFixed(minorUnitDigits(payout.currency))} ${payout.currency}`;

/**
 * Tells a partner that the provider did not pay their payout (shared/spec/payout-rails.md: "tells
 * the partner"), by e-mail, besides the portal's payouts list. Sent once, when the payout becomes
 * `failed` (payout-sender.ts); through the organization's mailer, so that test data's mail is kept,
 * never sent (simulated payouts do not come here either). It names the merchant and the program and
 * links to the partner's portal of that organization (mail-layout.ts). A mail that cannot be sent
 * is logged: the payout's state does not depend on it.
 */
export function payoutFailureMail(
  deps: {
    affiliates: AffiliatesService;
    programOf: (organizationId: string, programId: string) => Promise<ProgramOfMail | undefined>;
    mailer: OrganizationMailer;
    logger: Logger;
  },
  publicBaseUrl: string,
) {
  return async (payout: PayoutRecord): Promise<void> => {
    try {
      const affiliate = await deps.affiliates.get(payout.organization_id, payout.affiliate_id);
      const program = await deps.programOf(payout.organization_id, payout.program_id);
      if (!program) return;
      const amount = payoutAmountText(payout);
      const mail = partnerMail(
        {
          to: affiliate.email,
          subject: `Your payout of ${amount} from ${program.merchant} could not be paid`,
          paragraphs: [
            `Hello${affiliate.name ? ` ${affiliate.name}` : ''},`,
            `Your payout of ${amount} from ${program.merchant} ("${program.program}"), sent by ${RAIL_NAMES[payout.method] ?? payout.method}, could not be paid.\nReason: ${payout.failure_reason ?? 'not given'}.`,
            `Please check your payout details with ${program.merchant} (your payout e-mail or account). The commissions it carried are back in your balance and go into the next payout.`,
          ],
        },
        program,
        portalUrlOf(publicBaseUrl, payout.organization_id),
      );
      await deps.mailer.send(payout.organization_id, mail);
    } catch (err) {
      deps.logger.error({ err, payoutId: payout.id }, 'payout failure e-mail not sent');
    }
  };
}
