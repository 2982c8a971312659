import { notifyChange } from '../../db/change-notifications.js';
import { brandingLook, type BrandingLook } from '../branding/branding.js';
import type { MikroORM } from '@mikro-orm/postgresql';
import { Db } from '../../db/sql.js';
import type { CursorPosition } from '../../http/pagination.js';
import { isUuid } from '../../http/serialize.js';
import { effectiveStatusSql } from '../commissions/commission-lifecycle.js';
import { earnedSql } from '../commissions/earned.js';
import type { PeopleRepository } from '../people/people.repository.js';
import { sql, type RawBuilder } from 'kysely';

/** Whether the entry `k` is in a pending payout (a row of payout_items; a paid entry is `paid`). */
const IN_PENDING_PAYOUT = `exists (select 1 from payout_items i where i.organization_id = k.organization_id and i.commission_id = k.id)`;

/** A partner: one e-mail within one organization (its memberships are the affiliates rows of that e-mail). */
export interface PartnerKey {
  organizationId: string;
  email: string;
}

export interface ProgramRow {
  id: string;
  organization_id: string;
  organization_name: string;
  livemode: boolean;
  name: string;
  commission_type: 'percent' | 'flat';
  commission_value: string;
  currency: string;
  click_window_days: number;
  hold_days: number;
  minimum_payout: string;
  signup: 'open' | 'approval' | 'closed';
  terms: string | null;
  website_url: string | null;
}

export interface MembershipRow {
  affiliate_id: string;
  status: 'active' | 'pending' | 'disabled';
  slug: string;
  /** Its other link tokens, alphabetically (modules/affiliates/link-tokens.ts). */
  aliases: string[];
  name: string | null;
  payout_email: string | null;
  /** The partner's e-mail settings (Migration20270124000000_partner_notices). */
  email_commissions: boolean;
  email_payouts: boolean;
  created_at: Date;
  program: ProgramRow;
}

export interface SessionRow {
  id: string;
  organization_id: string;
  email: string;
  expires_at: Date;
  /** The organization's mode: false for a test partner (shared/spec/test-mode.md). */
  livemode: boolean;
}

const PROGRAM_COLUMNS = `p.id, p.organization_id, o.name as organization_name, o.livemode, p.name, p.commission_type, p.commission_value, p.currency,
  p.click_window_days, p.hold_days, p.minimum_payout, p.signup, p.terms, p.website_url`;

/** Which of the partner's memberships a read covers: all, or those of one program. */
const membershipFilter = (alias: string, partner: PartnerKey, programId: string | null) =>
  sql`${sql.ref(`${alias}.organization_id`)} = ${partner.organizationId} and ${sql.ref(`${alias}.affiliate_id`)} in (select id from affiliates where organization_id = ${partner.organizationId} and email = ${partner.email} and (${programId}::uuid is null or program_id = ${programId}::uuid))`;

/** The page before the cursor, newest first. */
const before = (alias: string, after: CursorPosition | undefined) => {
  const at = after?.at ?? null;
  return sql`(${at}::timestamptz is null or (${sql.ref(`${alias}.created_at`)}, ${sql.ref(`${alias}.id`)}) < (${at}::timestamptz, ${after?.id ?? null}::uuid))`;
};

/** The partner portal's only way to the database: it reads only rows of the partner's own memberships. */
export class PartnersRepository {
  constructor(
    private readonly orm: MikroORM,
    /** The organization's name, as the dashboard's people module reads it (given by app.ts). */
    private readonly people: Pick<PeopleRepository, 'organizationName'>,
  ) {}

  private get db(): Db {
    return Db.of(this.orm);
  }

  /** The merchant's branding as the portal shows it (modules/branding). */
  look(organizationId: string): Promise<BrandingLook | undefined> {
    return brandingLook(this.db, organizationId);
  }

  organizationName(organizationId: string): Promise<string | undefined> {
    return this.people.organizationName(organizationId);
  }

  async program(organizationId: string, programId: string): Promise<ProgramRow | undefined> {
    if (!isUuid(organizationId) || !isUuid(programId)) return undefined;
    return this.db.one(
      sql<ProgramRow>`select ${sql.raw(PROGRAM_COLUMNS)} from programs p join organizations o on o.id = p.organization_id where p.organization_id = ${organizationId} and p.id = ${programId}`,
    );
  }

  async slugTaken(organizationId: string, slug: string): Promise<boolean> {
    return (
      // One namespace of slugs and aliases (modules/affiliates/link-tokens.ts).
      (await this.db.one(
        sql`select 1 from affiliate_link_tokens where organization_id = ${organizationId} and token = ${slug}`,
      )) !== undefined
    );
  }

  async memberships(partner: PartnerKey): Promise<MembershipRow[]> {
    const rows = await this.db.rows(sql<
      ProgramRow & {
        affiliate_id: string;
        affiliate_status: MembershipRow['status'];
        slug: string;
        aliases: string[];
        partner_name: string | null;
        payout_email: string | null;
        email_commissions: boolean;
        email_payouts: boolean;
        joined_at: Date;
      }
    >`select a.id as affiliate_id, a.status as affiliate_status, a.slug, a.name as partner_name, a.payout_email, a.email_commissions, a.email_payouts, a.created_at as joined_at,
         array(select l.token from affiliate_link_aliases l where l.organization_id = a.organization_id and l.affiliate_id = a.id order by l.token) as aliases,
         ${sql.raw(PROGRAM_COLUMNS)}
         from affiliates a join programs p on p.organization_id = a.organization_id and p.id = a.program_id join organizations o on o.id = a.organization_id
        where a.organization_id = ${partner.organizationId} and a.email = ${partner.email} order by a.created_at, a.id`);
    return rows.map(
      ({
        affiliate_id,
        affiliate_status,
        slug,
        aliases,
        partner_name,
        payout_email,
        email_commissions,
        email_payouts,
        joined_at,
        ...program
      }) => ({
        affiliate_id,
        status: affiliate_status,
        slug,
        aliases,
        name: partner_name,
        payout_email,
        email_commissions,
        email_payouts,
        created_at: joined_at,
        program,
      }),
    );
  }

  async setPayoutEmail(partner: PartnerKey, payoutEmail: string): Promise<void> {
    await this.db.rows(
      sql`update affiliates set payout_email = ${payoutEmail} where organization_id = ${partner.organizationId} and email = ${partner.email}`,
    );
  }

  /** The merchant's owners, who hear of applications: a test organization's are its live twin's (it has no users of its own). */
  async ownerEmails(organizationId: string): Promise<string[]> {
    const rows = await this.db.rows(sql<{ email: string }>`select u.email from users u
        where u.role = 'owner'
          and u.organization_id = (select coalesce(o.live_organization_id, o.id) from organizations o where o.id = ${organizationId})
        order by u.created_at, u.id`);
    return rows.map((row) => row.email);
  }

  /** The partner's e-mail settings, for every membership of theirs with this merchant; a setting left out is unchanged. */
  async setEmailNotifications(
    partner: PartnerKey,
    settings: { commissions?: boolean | undefined; payouts?: boolean | undefined },
  ): Promise<void> {
    await this.db.rows(
      sql`update affiliates set email_commissions = coalesce(${settings.commissions ?? null}, email_commissions), email_payouts = coalesce(${settings.payouts ?? null}, email_payouts) where organization_id = ${partner.organizationId} and email = ${partner.email}`,
    );
  }

  /** Runs fn in one transaction (a sign-in link and the e-mail queued with it: partners.service.ts). */
  transaction<T>(fn: (db: Db) => Promise<T>): Promise<T> {
    return this.db.transaction(fn);
  }

  async insertSignInLink(
    row: { id: string; organization_id: string; email: string; token_hash: string; expires_at: Date },
    db: Db = this.db,
  ): Promise<void> {
    await db.rows(
      sql`insert into partner_sign_in_links (id, organization_id, email, token_hash, expires_at) values (${row.id}, ${row.organization_id}, ${row.email}, ${row.token_hash}, ${row.expires_at})`,
    );
  }

  /**
   * Uses a link once: the update marks it used only if it is unused and unexpired, so two requests
   * with the same token cannot both sign in. The session is created in the same transaction.
   */
  consumeSignInLink(
    organizationId: string,
    tokenHash: string,
    session: { id: string; token_hash: string; expires_at: Date; ip_address: string | null; user_agent: string | null },
  ): Promise<{ email: string } | undefined> {
    if (!isUuid(organizationId)) return Promise.resolve(undefined);
    return this.db.transaction(async (db) => {
      const link = await db.one(
        sql<{
          email: string;
        }>`update partner_sign_in_links set used_at = now() where organization_id = ${organizationId} and token_hash = ${tokenHash} and used_at is null and expires_at > now() returning email`,
      );
      if (!link) return undefined;
      await db.rows(
        sql`insert into partner_sessions (id, organization_id, email, token_hash, expires_at, ip_address, user_agent) values (${session.id}, ${organizationId}, ${link.email}, ${session.token_hash}, ${session.expires_at}, ${session.ip_address}, ${session.user_agent})`,
      );
      // The self_referral fraud rule compares later clicks with the partner's own sign-in
      // (charges/fraud.ts); each membership's cached attribution rule is dropped on every instance.
      const memberships = await db.rows(
        sql<{
          id: string;
        }>`update affiliates set portal_sign_in_ip = ${session.ip_address}, portal_sign_in_user_agent = ${session.user_agent} where organization_id = ${organizationId} and lower(email) = lower(${link.email}) returning id`,
      );
      for (const { id } of memberships) await notifyChange(db, { kind: 'affiliate', id });
      return link;
    });
  }

  async session(organizationId: string, tokenHash: string): Promise<SessionRow | undefined> {
    if (!isUuid(organizationId)) return undefined;
    return this.db.one(
      sql<SessionRow>`select s.id, s.organization_id, s.email, s.expires_at, o.livemode from partner_sessions s join organizations o on o.id = s.organization_id where s.organization_id = ${organizationId} and s.token_hash = ${tokenHash} and s.expires_at > now()`,
    );
  }

  async extendSession(organizationId: string, id: string, expiresAt: Date): Promise<void> {
    await this.db.rows(
      sql`update partner_sessions set expires_at = ${expiresAt} where organization_id = ${organizationId} and id = ${id}`,
    );
  }

  async endSession(organizationId: string, id: string): Promise<void> {
    await this.db.rows(sql`delete from partner_sessions where organization_id = ${organizationId} and id = ${id}`);
  }

  /** An organization's links and sessions past their expiry are of no use: removed when it issues new ones (one shard on Citus). */
  async pruneExpired(organizationId: string): Promise<void> {
    await this.db.rows(
      sql`delete from partner_sign_in_links where organization_id = ${organizationId} and expires_at < now() - interval '1 day'`,
    );
    await this.db.rows(
      sql`delete from partner_sessions where organization_id = ${organizationId} and expires_at < now()`,
    );
  }

  customers(partner: PartnerKey, programId: string | null, after: CursorPosition | undefined, limit: number) {
    return this.db.rows(
      sql<{
        id: string;
        customer_id: string;
        program_id: string;
        status: string;
        created_at: Date;
        first_conversion_at: Date | null;
      }>`select c.id, c.customer_id, c.program_id, c.status, c.created_at, c.first_conversion_at from customers c
        where ${membershipFilter('c', partner, programId)} and ${before('c', after)}
        order by c.created_at desc, c.id desc limit ${limit}`,
    );
  }

  commissions(partner: PartnerKey, programId: string | null, after: CursorPosition | undefined, limit: number) {
    return this.db.rows(
      sql<{
        id: string;
        program_id: string;
        type: string;
        status: string;
        amount: string;
        currency: string;
        customer_id: string | null;
        approves_at: Date | null;
        created_at: Date;
      }>`select k.id, k.program_id, k.type, ${sql.raw(effectiveStatusSql('k'))} as status, k.amount, k.currency, k.customer_id, k.approves_at, k.created_at from commissions k
        where ${membershipFilter('k', partner, programId)} and ${before('k', after)}
        order by k.created_at desc, k.id desc limit ${limit}`,
    );
  }

  payouts(partner: PartnerKey, programId: string | null, after: CursorPosition | undefined, limit: number) {
    return this.db.rows(
      sql<{
        id: string;
        program_id: string;
        amount: string;
        currency: string;
        status: string;
        failure_reason: string | null;
        retried_by_payout_id: string | null;
        commission_count: number;
        created_at: Date;
        paid_at: Date | null;
      }>`select k.id, k.program_id, k.amount, k.currency, k.status, k.failure_reason, k.retried_by_payout_id, k.commission_count, k.created_at, k.paid_at from payouts k
        where ${membershipFilter('k', partner, programId)} and ${before('k', after)}
        order by k.created_at desc, k.id desc limit ${limit}`,
    );
  }

  /** The partner's unpaid and paid totals per program and currency (in_payout: approved, in a pending payout), and their pending entries by approval date. */
  async balances(partner: PartnerKey, programId: string | null) {
    const status = sql.raw(effectiveStatusSql('k'));
    const inPendingPayout = sql.raw(IN_PENDING_PAYOUT);
    const totals = await this.db.rows(
      sql<{
        program_id: string;
        currency: string;
        pending: string;
        on_hold: string;
        approved: string;
        in_payout: string;
        paid: string;
      }>`select k.program_id, k.currency,
              coalesce(sum(k.amount) filter (where ${status} = 'pending'), 0) as pending,
              coalesce(sum(k.amount) filter (where k.status = 'on_hold'), 0) as on_hold,
              coalesce(sum(k.amount) filter (where ${status} = 'approved' and not ${inPendingPayout}), 0) as approved,
              coalesce(sum(k.amount) filter (where ${status} = 'approved' and ${inPendingPayout}), 0) as in_payout,
              coalesce(sum(k.amount) filter (where k.status = 'paid'), 0) as paid
         from commissions k where ${membershipFilter('k', partner, programId)}
        group by k.program_id, k.currency order by k.program_id, k.currency`,
    );
    const pending = await this.db.rows(
      sql<{
        program_id: string;
        currency: string;
        amount: string;
        approves_at: Date;
      }>`select k.program_id, k.currency, k.amount, k.approves_at from commissions k
        where ${membershipFilter('k', partner, programId)} and ${status} = 'pending' and k.approves_at is not null
        order by k.approves_at, k.id`,
    );
    return { totals, pending };
  }

  /** Counts per period (date_trunc in UTC) of the partner's clicks, signups, conversions and earnings over [from, to). */
  async activity(
    partner: PartnerKey,
    programId: string | null,
    from: Date,
    to: Date,
    interval: 'day' | 'week' | 'month',
  ) {
    const period = (column: RawBuilder<unknown>) =>
      sql`(date_trunc(${interval}::text, ${column} at time zone 'UTC') at time zone 'UTC')`;
    const counts = (table: 'clicks' | 'customers' | 'conversions', column: 'occurred_at' | 'created_at') => {
      const at = sql.ref(`t.${column}`);
      return this.db.rows(
        sql<{
          period: Date;
          n: string;
        }>`select ${period(sql`${at}`)} as period, count(*) as n from ${sql.table(table)} t
          where ${membershipFilter('t', partner, programId)} and ${at} >= ${from} and ${at} < ${to} group by 1`,
      );
    };
    const earned = sql.raw(earnedSql('k'));
    const [clicks, signups, conversions, earnings] = await Promise.all([
      counts('clicks', 'occurred_at'),
      counts('customers', 'created_at'),
      counts('conversions', 'occurred_at'),
      // A sale's entries (its clawbacks too) count in the period of the sale, an adjustment in that of its creation: as the merchant's reports.
      this.db.rows(
        sql<{
          period: Date;
          currency: string;
          earned: string;
          on_hold: string;
        }>`select ${period(sql`coalesce(v.occurred_at, k.created_at)`)} as period, k.currency,
                coalesce(sum(k.amount) filter (where ${earned}), 0) as earned,
                coalesce(sum(k.amount) filter (where k.status = 'on_hold'), 0) as on_hold
           from commissions k left join conversions v on v.organization_id = k.organization_id and v.id = k.conversion_id
          where ${membershipFilter('k', partner, programId)} and (${earned} or k.status = 'on_hold')
            and coalesce(v.occurred_at, k.created_at) >= ${from} and coalesce(v.occurred_at, k.created_at) < ${to}
          group by 1, 2`,
      ),
    ]);
    return { clicks, signups, conversions, earnings };
  }
}
