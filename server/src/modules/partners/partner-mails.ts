import type { Mail } from '../people/mailer.js';
import { referralLinkText } from './partner-views.js';
import type { ProgramRow } from './partners.repository.js';

/** The e-mails the partner portal sends, as pure functions of what they say (partners.service.ts sends them). */

export const SIGN_IN_LINK_MINUTES = 15;
export const INVITATION_LINK_DAYS = 7;

type Program = Pick<ProgramRow, 'name' | 'organization_name' | 'website_url'>;

/**
 * The answer to an application, by e-mail with a sign-in link: welcome (`active`), awaiting the
 * merchant (`pending`), or, to an e-mail already in the program (`already`), that nothing more is
 * needed: the API answers the same in all three cases, only the applicant's mailbox tells them apart.
 */
export function applicationMail(
  to: string,
  program: Program,
  outcome: { kind: 'active'; slug: string } | { kind: 'pending' } | { kind: 'already' },
  links: { url: string; signInPage: string },
): Mail {
  const joined = `${program.organization_name}'s partner program "${program.name}"`;
  const opening =
    outcome.kind === 'already'
      ? `You applied to ${joined} with this e-mail, which already is a partner of it: there is nothing more to do. If you did not apply, ignore this e-mail.`
      : outcome.kind === 'active'
        ? `Welcome to ${joined}: your referral links work now.\n\n${referralLinkText(program, outcome.slug)}`
        : `Thank you for applying to ${joined}. Your application awaits the merchant's approval; your links start working once you are approved.`;
  return {
    to,
    subject: `Your application to ${program.organization_name}`,
    text: `${opening}\n\nSign in to your partner portal (the link works once, for ${SIGN_IN_LINK_MINUTES} minutes): ${links.url}\n\nLater, ask for a new link at ${links.signInPage}`,
  };
}

export const signInLinkMail = (to: string, organizationName: string, url: string): Mail => ({
  to,
  subject: `Sign in to ${organizationName}'s partner portal`,
  text: `Sign in (the link works once, for ${SIGN_IN_LINK_MINUTES} minutes): ${url}\n\nIf you did not ask for it, ignore this e-mail.`,
});

export const portalInvitationMail = (
  to: string,
  program: Program,
  links: { url: string; signInPage: string },
): Mail => ({
  to,
  subject: `${program.organization_name} invites you to its partner portal`,
  text: `${program.organization_name} invites you to its partner portal for "${program.name}": your referral links, the customers you referred, your commissions and payouts.\n\nSign in (the link works once, for ${INVITATION_LINK_DAYS} days): ${links.url}\n\nLater, ask for a new link at ${links.signInPage}`,
});

export const approvedMail = (to: string, program: Program, slug: string, url: string): Mail => ({
  to,
  subject: `You're approved: ${program.organization_name}'s partner program`,
  text: `${program.organization_name} approved your application to "${program.name}": your referral link works now.\n\n${referralLinkText(program, slug)}\n\nSign in to your partner portal (the link works once, for ${INVITATION_LINK_DAYS} days): ${url}`,
});

export const declinedMail = (to: string, program: Program): Mail => ({
  to,
  subject: `Your application to ${program.organization_name}`,
  text: `${program.organization_name} did not approve your application to "${program.name}".`,
});
