import type { Mail } from '../people/mailer.js';

/**
 * The one rendering of every e-mail about a merchant's partner program (to its partners, and to the
 * merchant about its partners): each says whose program it is and ends on a link that works, the
 * recipient's own organization's portal (or dashboard) page, never a bare `/portal`. The e-mails'
 * words are written beside their use cases (partner-mails.ts, partner-notices.ts,
 * payouts/failure-mail.ts); what they look like is decided here only, so that a change of the
 * layout (the program's sender name, logo, colour) reaches all of them.
 */
export interface ProgramOfMail {
  /** The merchant: the organization's name. */
  merchant: string;
  /** The program's name, when the e-mail is about one program. */
  program?: string | undefined;
}

export interface MailContent {
  to: string;
  subject: string;
  /** Paragraphs, separated by an empty line. */
  paragraphs: readonly string[];
}

/** The partner portal of an organization: its sign-in page when signed out, the partner's page when signed in. */
export const portalUrlOf = (baseUrl: string, organizationId: string): string =>
  `${baseUrl.replace(/\/+$/, '')}/portal/${organizationId}`;

/** The portal's sign-in page of an organization (asks for a new sign-in link). */
export const portalSignInUrlOf = (baseUrl: string, organizationId: string): string =>
  `${portalUrlOf(baseUrl, organizationId)}/sign-in`;

/** Who the program is, as the e-mails' closing line says it: `Shop's partner program "Partners"`. */
export const programLabel = (program: ProgramOfMail): string =>
  `${program.merchant}'s partner program${program.program ? ` "${program.program}"` : ''}`;

/**
 * The common renderer: the content, then a closing block naming the program and the link
 * (`link.label: link.url`). Every partner and merchant e-mail of the program goes through it.
 */
export function renderProgramMail(
  content: MailContent,
  program: ProgramOfMail,
  link: { label: string; url: string },
): Mail {
  const closing = [`— ${programLabel(program)}`, `${link.label}: ${link.url}`].join('\n');
  return {
    to: content.to,
    subject: content.subject,
    text: [...content.paragraphs, closing].join('\n\n'),
  };
}

/** An e-mail to a partner: closes on their portal (`portalUrlOf`). */
export const partnerMail = (content: MailContent, program: ProgramOfMail, portalUrl: string): Mail =>
  renderProgramMail(content, program, { label: 'Your partner portal', url: portalUrl });

/** An e-mail to the merchant's team about its program: closes on the dashboard page it is about. */
export const merchantMail = (content: MailContent, program: ProgramOfMail, dashboardUrl: string): Mail =>
  renderProgramMail(content, program, { label: 'Open in the dashboard', url: dashboardUrl });
