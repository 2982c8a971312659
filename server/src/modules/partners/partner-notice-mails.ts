import type { Mail } from '../people/mailer.js';
import { partnerMail, portalUrlOf, type ProgramOfMail } from './mail-layout.js';

/**
 * The notices' e-mails (issue 47, item 10), as pure functions of what they say, rendered by
 * mail-layout.ts: to a partner when they earn a commission and when a payout is sent
 * (partner-notices.ts sends them).
 */

const RAIL_NAMES: Record<string, string> = { paypal: 'PayPal', stripe: 'Stripe', wise: 'Wise' };

const OPT_OUT = "You can turn these e-mails off in your partner portal's settings.";

const hello = (name: string | null): string => `Hello${name ? ` ${name}` : ''},`;

export function commissionEarnedMail(
  notice: {
    to: string;
    name: string | null;
    amount: string;
    status: 'pending' | 'approved' | 'paid';
    description: string | null;
  },
  program: ProgramOfMail,
  links: { baseUrl: string; organizationId: string },
): Mail {
  const when =
    notice.status === 'pending'
      ? "It is pending for the program's hold period, then it is approved and goes into your next payout."
      : 'It is approved and goes into your next payout.';
  return partnerMail(
    {
      to: notice.to,
      subject: `You earned a ${notice.amount} commission with ${program.merchant}`,
      paragraphs: [
        hello(notice.name),
        `You earned a commission of ${notice.amount} in ${program.merchant}'s partner program "${program.program}"${notice.description ? ` (${notice.description})` : ''}. ${when}`,
        OPT_OUT,
      ],
    },
    program,
    portalUrlOf(links.baseUrl, links.organizationId),
  );
}

export function payoutSentMail(
  notice: { to: string; name: string | null; amount: string; method: string; reference: string | null },
  program: ProgramOfMail,
  links: { baseUrl: string; organizationId: string },
): Mail {
  const rail = RAIL_NAMES[notice.method];
  return partnerMail(
    {
      to: notice.to,
      subject: `Your payout of ${notice.amount} from ${program.merchant} was sent`,
      paragraphs: [
        hello(notice.name),
        `${program.merchant} sent you a payout of ${notice.amount} for "${program.program}"${rail ? ` by ${rail}` : ''}${notice.reference ? ` (reference ${notice.reference})` : ''}.`,
        OPT_OUT,
      ],
    },
    program,
    portalUrlOf(links.baseUrl, links.organizationId),
  );
}
