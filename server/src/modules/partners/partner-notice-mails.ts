import type { Mail } from '../people/mailer.js';
import { merchantMail, partnerMail, portalUrlOf, type ProgramOfMail } from './mail-layout.js';

/**
 * The notices' e-mails (issue 47, item 10), as pure functions of what they say, rendered by
 * mail-layout.ts: to a partner when they earn a commission and when a payout is sent
 * (partner-notices.ts sends them), and to the merchant's owners when a partner applies
 * (partners.service.ts).
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
    /** A pending commission's end of hold. */
    approvesAt: Date | null;
  },
  program: ProgramOfMail,
  links: { baseUrl: string; organizationId: string },
): Mail {
  const when =
    notice.status === 'pending' && notice.approvesAt && notice.approvesAt.getTime() > Date.now()
      ? `It is pending until ${notice.approvesAt.toISOString().slice(0, 10)} (the program's hold), then it is approved and goes into your next payout.`
      : notice.status === 'paid'
        ? 'It is paid.'
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

/** To each owner of the merchant: a partner applied (`pending`: awaits their decision) or joined an open program (`active`). */
export function partnerAppliedMail(
  to: string,
  applicant: { name: string; email: string; slug: string; status: 'active' | 'pending'; affiliateId: string },
  program: ProgramOfMail,
  baseUrl: string,
): Mail {
  const who = `${applicant.name} (${applicant.email})`;
  return merchantMail(
    {
      to,
      subject:
        applicant.status === 'pending'
          ? `New partner application: ${applicant.name} awaits your approval`
          : `New partner: ${applicant.name} joined "${program.program}"`,
      paragraphs: [
        applicant.status === 'pending'
          ? `${who} applied to your partner program "${program.program}" with the slug "${applicant.slug}". Approve or decline the application on the affiliate's page in the dashboard.`
          : `${who} joined your partner program "${program.program}" with the slug "${applicant.slug}": the program is open, so their links work now.`,
      ],
    },
    program,
    `${baseUrl.replace(/\/+$/, '')}/dashboard/affiliates/${applicant.affiliateId}`,
  );
}
