import { createHash, randomBytes } from 'node:crypto';
import { BRANDING_DEFAULT_COLOR } from '@affiliate-attribution/contract';
import type { Application, JoinPage, Partner, PortalOrganization } from '../../resources.js';
import type { Logger } from 'pino';
import { BadRequestError, ConflictError, ForbiddenError, NotFoundError, UnauthorizedError } from '../../http/errors.js';
import { iso } from '../../http/serialize.js';
import type { AffiliateStatusChange, AffiliatesService } from '../affiliates/affiliates.service.js';
import type { Mail } from '../people/mailer.js';
import type { OrganizationMailer } from '../test-emails/test-emails.js';
import type { ProgramOfMail } from './mail-layout.js';
import { partnerAppliedMail } from './partner-notice-mails.js';
import { referralLink, toPartnerProgram } from './partner-views.js';
import {
  applicationMail,
  approvedMail,
  declinedMail,
  INVITATION_LINK_DAYS,
  portalInvitationMail,
  SIGN_IN_LINK_MINUTES,
  signInLinkMail,
} from './partner-mails.js';
import type { PartnerKey, PartnersRepository, ProgramRow } from './partners.repository.js';
import { newRowId } from '../../db/row-ids.js';

export { INVITATION_LINK_DAYS, SIGN_IN_LINK_MINUTES } from './partner-mails.js';
export const PARTNER_SESSION_DAYS = 7;
/** A portal preview's link (the merchant's, never e-mailed): opened at once, from the dashboard. */
export const PREVIEW_LINK_MINUTES = 5;
const DAY_MS = 86_400_000;

export const hashToken = (token: string): string => createHash('sha256').update(token).digest('hex');
const newToken = (): string => randomBytes(32).toString('base64url');

export const normalizeEmail = (email: string): string => email.trim().toLowerCase();

/** The partner a session is for, and the session itself (http: partner-session.ts). */
export interface PartnerSession extends PartnerKey {
  sessionId: string;
  expiresAt: Date;
  /** False for a test partner (a session of a test organization): its views carry livemode false. Read with the session (not known at sign-in). */
  livemode?: boolean;
}

/**
 * The partner portal's use cases (spec/ledger.md, "People"): joining a program, signing in by an
 * e-mailed one-time link, and what a partner sees. A partner is an e-mail within an organization;
 * every read is scoped to that pair's memberships in the repository's statements, so no id in a
 * request can reach another partner's rows.
 */
export class PartnersService {
  constructor(
    private readonly partners: PartnersRepository,
    private readonly affiliates: AffiliatesService,
    /** E-mails to partners: those of test data are kept as test e-mails, never sent (test-emails.ts). */
    private readonly mailer: OrganizationMailer,
    private readonly logger: Logger,
  ) {}

  async joinPage(organizationId: string, programId: string): Promise<JoinPage> {
    const program = await this.partners.program(organizationId, programId);
    if (!program) throw new NotFoundError('Program not found');
    return {
      organization: { id: program.organization_id, name: program.organization_name },
      program: toPartnerProgram(program),
    };
  }

  /** The merchant a portal's public pages name (its sign-in page). */
  async portalOrganization(organizationId: string): Promise<PortalOrganization> {
    const name = await this.partners.organizationName(organizationId);
    if (name === undefined) throw new NotFoundError('Organization not found');
    return { organization: { id: organizationId, name } };
  }

  /** The merchant and program an e-mail about this program names (mail-layout.ts); undefined when the program is gone. */
  async programOfMail(organizationId: string, programId: string): Promise<ProgramOfMail | undefined> {
    const program = await this.partners.program(organizationId, programId);
    return program && { merchant: program.organization_name, program: program.name };
  }

  async slugAvailable(organizationId: string, slug: string): Promise<boolean> {
    if ((await this.partners.organizationName(organizationId)) === undefined)
      throw new NotFoundError('Organization not found');
    return !(await this.partners.slugTaken(organizationId, slug));
  }

  /**
   * An application through the join page: a membership, `active` in an open program and `pending`
   * in one that approves its partners, with the moment the terms were accepted; then a sign-in link
   * by e-mail, which is also how the applicant proves the address is theirs.
   */
  async apply(
    organizationId: string,
    programId: string,
    input: { name: string; email: string; slug: string; payout_email?: string; accept_terms?: true },
    baseUrl: string,
  ): Promise<Application> {
    const program = await this.partners.program(organizationId, programId);
    if (!program) throw new NotFoundError('Program not found');
    if (program.signup === 'closed') throw new ForbiddenError('This program takes no applications');
    // Terms are accepted only where there are some: a program without terms asks for no checkbox.
    const hasTerms = program.terms !== null && program.terms.trim() !== '';
    if (hasTerms && input.accept_terms !== true)
      throw new BadRequestError("accept_terms: You must accept the program's terms");
    const email = normalizeEmail(input.email);
    const { affiliate, deduped } = await this.affiliates.create(organizationId, {
      email,
      program_id: programId,
      slug: input.slug,
      name: input.name,
      payout_email: input.payout_email,
      status: program.signup === 'open' ? 'active' : 'pending',
      terms_accepted_at: hasTerms ? new Date() : undefined,
    });
    // The answer is the same whether or not the e-mail was already in the program (as for sign-in
    // links, no one learns who is a partner): the status a new application gets, the slug asked
    // for. A slug someone holds is refused as for a new application; the partner who already is
    // one hears of it by e-mail, with a sign-in link, and no second membership is made.
    if (deduped && (await this.partners.slugTaken(organizationId, input.slug)))
      throw new ConflictError(`slug: "${input.slug}" is already taken`);
    const outcome = deduped
      ? ({ kind: 'already' } as const)
      : affiliate.status === 'active'
        ? ({ kind: 'active', slug: affiliate.slug } as const)
        : ({ kind: 'pending' } as const);
    await this.mailLink({ organizationId, email }, SIGN_IN_LINK_MINUTES * 60_000, baseUrl, (url) =>
      applicationMail(email, program, outcome, { url, baseUrl }),
    );
    if (!deduped) await this.tellOwners(organizationId, program, affiliate, input.name, baseUrl);
    return { program_id: programId, email, slug: input.slug, status: program.signup === 'open' ? 'active' : 'pending' };
  }

  /**
   * The merchant's owners hear of a new partner (an application awaiting them, or a partner who
   * joined an open program), once: a repeated application is deduped above and tells nobody. After
   * the membership is committed; an e-mail that cannot be queued is logged and the application
   * stands.
   */
  private async tellOwners(
    organizationId: string,
    program: ProgramRow,
    affiliate: { id: string; email: string; slug: string; status: string },
    name: string,
    baseUrl: string,
  ): Promise<void> {
    try {
      const status = affiliate.status === 'active' ? 'active' : 'pending';
      const applicant = {
        name,
        email: affiliate.email,
        slug: affiliate.slug,
        status,
        affiliateId: affiliate.id,
      } as const;
      const of = { merchant: program.organization_name, program: program.name };
      for (const owner of await this.partners.ownerEmails(organizationId))
        await this.mailer.send(organizationId, partnerAppliedMail(owner, applicant, of, baseUrl));
    } catch (err) {
      this.logger.error(
        { err, affiliate_id: affiliate.id },
        'could not tell the merchant of a new partner application',
      );
    }
  }

  /**
   * E-mails a sign-in link to a partner of this organization, and to nobody else; the caller answers
   * the same either way (and does not wait for the e-mail), so neither the answer nor its timing
   * tells who is a partner.
   */
  async requestSignInLink(organizationId: string, rawEmail: string, baseUrl: string): Promise<void> {
    const organizationName = await this.partners.organizationName(organizationId);
    if (organizationName === undefined) throw new NotFoundError('Organization not found');
    const partner = { organizationId, email: normalizeEmail(rawEmail) };
    if ((await this.partners.memberships(partner)).length === 0) return;
    // The link and its queued e-mail, in one transaction; the mail server is never waited for.
    await this.mailLink(partner, SIGN_IN_LINK_MINUTES * 60_000, baseUrl, (url) =>
      signInLinkMail(partner.email, { id: organizationId, name: organizationName }, { url, baseUrl }),
    );
  }

  /** The merchant invites one of its affiliates to the portal: a sign-in link valid 7 days, by e-mail only. */
  async invite(
    organizationId: string,
    affiliate: { email: string; program_id: string },
    baseUrl: string,
  ): Promise<{ email: string; expires_at: string }> {
    const program = await this.partners.program(organizationId, affiliate.program_id);
    if (!program) throw new NotFoundError('Program not found');
    const { expiresAt } = await this.mailLink(
      { organizationId, email: affiliate.email },
      INVITATION_LINK_DAYS * DAY_MS,
      baseUrl,
      (url) => portalInvitationMail(affiliate.email, program, { url, baseUrl }),
    );
    return { email: affiliate.email, expires_at: iso(expiresAt) };
  }

  /**
   * The merchant decided on an application: the partner hears of it by e-mail, with a link that
   * signs them in (valid 7 days, once) when approved. Queued (mail-queue.ts): the merchant's
   * request never waits for the mail server.
   */
  async applicationDecided(change: AffiliateStatusChange): Promise<void> {
    if (change.previous !== 'pending' || change.affiliate.status === 'pending') return;
    const program = await this.partners.program(change.organizationId, change.affiliate.program_id);
    if (!program) return;
    const to = change.affiliate.email;
    if (change.affiliate.status === 'active') {
      await this.mailLink(
        { organizationId: change.organizationId, email: to },
        INVITATION_LINK_DAYS * DAY_MS,
        change.baseUrl,
        (url) => approvedMail(to, program, change.affiliate.slug, { url, baseUrl: change.baseUrl }),
      );
    } else {
      await this.mailer.send(change.organizationId, declinedMail(to, program, change.baseUrl));
    }
  }

  /**
   * The merchant previews the portal as one of its test affiliates (the caller checks the mode): a
   * sign-in link as every other (once, stored hashed), for 5 minutes, on the portal's preview page,
   * which signs in without the click an e-mailed link asks for (this one is never in a mailbox).
   */
  async previewLink(
    organizationId: string,
    affiliate: { email: string },
    baseUrl: string,
  ): Promise<{ url: string; expires_at: string }> {
    const { url, expiresAt } = await this.createLink(
      { organizationId, email: affiliate.email },
      PREVIEW_LINK_MINUTES * 60_000,
      baseUrl,
      'preview',
    );
    return { url, expires_at: iso(expiresAt) };
  }

  /**
   * A new sign-in link (its token stored hashed), and, with `mail`, the e-mail that carries it,
   * queued in the link's transaction (mail-queue.ts): the link and its e-mail exist together, and
   * a mail server that is down fails no request.
   */
  private async createLink(
    partner: PartnerKey,
    validMs: number,
    baseUrl: string,
    page: 'sign-in/link' | 'preview' = 'sign-in/link',
    mail?: (url: string) => Mail,
  ): Promise<{ url: string; expiresAt: Date }> {
    const token = newToken();
    const expiresAt = new Date(Date.now() + validMs);
    const url = `${baseUrl}/portal/${partner.organizationId}/${page}?token=${token}`;
    if (mail) await this.mailer.ready?.();
    await this.partners.transaction(async (db) => {
      await this.partners.insertSignInLink(
        {
          id: newRowId(),
          organization_id: partner.organizationId,
          email: partner.email,
          token_hash: hashToken(token),
          expires_at: expiresAt,
        },
        db,
      );
      if (mail) await this.mailer.send(partner.organizationId, mail(url), { transaction: db });
    });
    if (mail) this.mailer.wake?.();
    this.partners
      .pruneExpired(partner.organizationId)
      .catch((err: unknown) => this.logger.warn({ err }, 'could not prune expired partner sign-in links and sessions'));
    return { url, expiresAt };
  }

  /** A sign-in link e-mailed by `mail` (createLink). */
  private mailLink(
    partner: PartnerKey,
    validMs: number,
    baseUrl: string,
    mail: (url: string) => Mail,
  ): Promise<{ url: string; expiresAt: Date }> {
    return this.createLink(partner, validMs, baseUrl, 'sign-in/link', mail);
  }

  /** A link's token for a new session (its own token, stored hashed): once, before the link expires. */
  async signIn(
    organizationId: string,
    token: string,
    client: { ip: string | null; userAgent: string | null },
  ): Promise<{ token: string; session: PartnerSession }> {
    const sessionToken = newToken();
    const session = {
      id: newRowId(),
      token_hash: hashToken(sessionToken),
      expires_at: new Date(Date.now() + PARTNER_SESSION_DAYS * DAY_MS),
      ip_address: client.ip,
      user_agent: client.userAgent?.slice(0, 500) ?? null,
    };
    const link = await this.partners.consumeSignInLink(organizationId, hashToken(token), session);
    if (!link)
      throw new UnauthorizedError(
        'This sign-in link is not valid: it was used, has expired, or never existed. Ask for a new one.',
      );
    return {
      token: sessionToken,
      session: { organizationId, email: link.email, sessionId: session.id, expiresAt: session.expires_at },
    };
  }

  /** The session behind a cookie's token, renewed for another 7 days once a day while it is used. */
  async session(
    organizationId: string,
    token: string,
  ): Promise<{ session: PartnerSession; renewed: boolean } | undefined> {
    const row = await this.partners.session(organizationId, hashToken(token));
    if (!row) return undefined;
    const session = {
      organizationId: row.organization_id,
      email: row.email,
      sessionId: row.id,
      expiresAt: row.expires_at,
      livemode: row.livemode,
    };
    if (row.expires_at.getTime() - Date.now() > (PARTNER_SESSION_DAYS - 1) * DAY_MS) return { session, renewed: false };
    session.expiresAt = new Date(Date.now() + PARTNER_SESSION_DAYS * DAY_MS);
    await this.partners.extendSession(row.organization_id, row.id, session.expiresAt);
    return { session, renewed: true };
  }

  signOut(session: PartnerSession): Promise<void> {
    return this.partners.endSession(session.organizationId, session.sessionId);
  }

  /** The partner of a session, or null when their memberships are gone since (GET /partner/api/session never answers 401). */
  async partnerOrNull(partner: PartnerKey): Promise<Partner | null> {
    return (await this.partners.memberships(partner)).length === 0 ? null : this.me(partner);
  }

  async me(partner: PartnerKey): Promise<Partner> {
    const [memberships, look] = await Promise.all([
      this.partners.memberships(partner),
      this.partners.look(partner.organizationId),
    ]);
    if (memberships.length === 0) throw new UnauthorizedError('No partner with this e-mail any more');
    const first = memberships[0];
    return {
      email: partner.email,
      name: memberships.find((m) => m.name)?.name ?? null,
      payout_email: memberships.find((m) => m.payout_email)?.payout_email ?? partner.email,
      // Set together for all memberships (updateMe); a membership that differs (joined later) counts as off when any is.
      email_notifications: {
        commissions: memberships.every((m) => m.email_commissions),
        payouts: memberships.every((m) => m.email_payouts),
      },
      organization: {
        id: first.program.organization_id,
        name: first.program.organization_name,
        logo_url: look?.logoUrl ?? null,
        brand_color: look?.color ?? BRANDING_DEFAULT_COLOR,
      },
      memberships: memberships.map((m) => ({
        affiliate_id: m.affiliate_id,
        status: m.status,
        slug: m.slug,
        aliases: m.aliases,
        referral_link: referralLink(m.program.website_url, m.slug),
        program: toPartnerProgram(m.program),
        joined_at: iso(m.created_at),
        livemode: m.program.livemode,
      })),
      livemode: first.program.livemode,
    };
  }

  /** PATCH /partner/api/me: where payouts go, and which e-mails come, for every membership of the partner. */
  async updateMe(
    partner: PartnerKey,
    input: {
      payout_email?: string | undefined;
      email_notifications?: { commissions?: boolean | undefined; payouts?: boolean | undefined } | undefined;
    },
  ): Promise<Partner> {
    if (input.payout_email !== undefined)
      await this.partners.setPayoutEmail(partner, normalizeEmail(input.payout_email));
    if (input.email_notifications !== undefined)
      await this.partners.setEmailNotifications(partner, input.email_notifications);
    return this.me(partner);
  }
}
