import type { Mail } from '../people/mailer.js';
import { partnerMail, portalSignInUrlOf, portalUrlOf, type ProgramOfMail } from './mail-layout.js';
import { referralLinkText } from './partner-views.js';
import type { ProgramRow } from './partners.repository.js';

/**
 * The e-mails the partner portal sends, as pure functions of what they say (partners.service.ts
 * sends them), rendered by mail-layout.ts: each names the merchant and its program and closes on
 * the organization's own portal.
 */

export const SIGN_IN_LINK_MINUTES = 15;
export const INVITATION_LINK_DAYS = 7;

type Program = Pick<ProgramRow, 'name' | 'organization_id' | 'organization_name' | 'website_url'>;

const ofProgram = (program: Program): ProgramOfMail => ({ merchant: program.organization_name, program: program.name });

/**
 * The answer to an application, by e-mail with a sign-in link: welcome (`active`), awaiting the
 * merchant (`pending`), or, to an e-mail already in the program (`already`), that nothing more is
 * needed: the API answers the same in all three cases, only the applicant's mailbox tells them apart.
 */
export function applicationMail(
  to: string,
  program: Program,
  outcome: { kind: 'active'; slug: string } | { kind: 'pending' } | { kind: 'already' },
  links: { url: string; baseUrl: string },
): Mail {
  const joined = `${program.organization_name}'s partner program "${program.name}"`;
  const opening =
    outcome.kind === 'already'
      ? `You applied to ${joined} with this e-mail, which already is a partner of it: there is nothing more to do. If you did not apply, ignore this e-mail.`
      : outcome.kind === 'active'
        ? `Welcome to ${joined}: your referral links work now.\n\n${referralLinkText(program, outcome.slug)}`
        : `Thank you for applying to ${joined}. Your application awaits the merchant's approval; your links start working once you are approved.`;
  return partnerMail(
    {
      to,
      subject: `Your application to ${program.organization_name}`,
      paragraphs: [
        opening,
        `Sign in to your partner portal (the link works once, for ${SIGN_IN_LINK_MINUTES} minutes): ${links.url}`,
        `Later, ask for a new link at ${portalSignInUrlOf(links.baseUrl, program.organization_id)}`,
      ],
    },
    ofProgram(program),
    portalUrlOf(links.baseUrl, program.organization_id),
  );
}

export const signInLinkMail = (
  to: string,
  organization: { id: string; name: string },
  links: { url: string; baseUrl: string },
): Mail =>
  partnerMail(
    {
      to,
      subject: `Sign in to ${organization.name}'s partner portal`,
      paragraphs: [
        `Sign in to ${organization.name}'s partner portal (the link works once, for ${SIGN_IN_LINK_MINUTES} minutes): ${links.url}`,
        'If you did not ask for it, ignore this e-mail.',
      ],
    },
    { merchant: organization.name },
    portalUrlOf(links.baseUrl, organization.id),
  );

export const portalInvitationMail = (to: string, program: Program, links: { url: string; baseUrl: string }): Mail =>
  partnerMail(
    {
      to,
      subject: `${program.organization_name} invites you to its partner portal`,
      paragraphs: [
        `${program.organization_name} invites you to its partner portal for "${program.name}": your referral links, the customers you referred, your commissions and payouts.`,
        `Sign in (the link works once, for ${INVITATION_LINK_DAYS} days): ${links.url}`,
        `Later, ask for a new link at ${portalSignInUrlOf(links.baseUrl, program.organization_id)}`,
      ],
    },
    ofProgram(program),
    portalUrlOf(links.baseUrl, program.organization_id),
  );

export const approvedMail = (
  to: string,
  program: Program,
  slug: string,
  links: { url: string; baseUrl: string },
): Mail =>
  partnerMail(
    {
      to,
      subject: `You're approved: ${program.organization_name}'s partner program`,
      paragraphs: [
        `${program.organization_name} approved your application to "${program.name}": your referral link works now.`,
        referralLinkText(program, slug),
        `Sign in to your partner portal (the link works once, for ${INVITATION_LINK_DAYS} days): ${links.url}`,
      ],
    },
    ofProgram(program),
    portalUrlOf(links.baseUrl, program.organization_id),
  );

export const declinedMail = (to: string, program: Program, baseUrl: string): Mail =>
  partnerMail(
    {
      to,
      subject: `Your application to ${program.organization_name}`,
      paragraphs: [`${program.organization_name} did not approve your application to "${program.name}".`],
    },
    ofProgram(program),
    portalUrlOf(baseUrl, program.organization_id),
  );
