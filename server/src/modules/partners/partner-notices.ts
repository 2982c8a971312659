import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { Db } from '../../db/sql.js';
import type { Mail } from '../people/mailer.js';
import { payoutAmountText } from '../payouts/failure-mail.js';
import type { OrganizationMailer } from '../test-emails/test-emails.js';
import { commissionEarnedMail, payoutSentMail } from './partner-notice-mails.js';
import { sql, type RawBuilder } from 'kysely';

/** The migration that made notices: nothing created before it was applied is announced (no e-mails about history on upgrade). */
const NOTICES_MIGRATION = 'Migration20270124000000_partner_notices';

export interface PartnerNoticesOptions {
  /** Time between rounds; default 5 s. */
  intervalMs?: number;
  /** How far back a round looks for what it has not announced yet (a service that was down that long catches up); default 3 days. */
  lookbackHours?: number;
  /** Rows announced per organization and kind in one transaction; default 200. */
  batchSize?: number;
}

interface Kind {
  kind: 'commission_earned' | 'payout_sent';
  /** The rows to announce since `?` (of organization `?` first, when `scoped`): id, affiliate_id, program_id, and what the e-mail says. */
  /** The kind's rows not announced yet since `since`, of one organization or (none) of all. */
  due: (since: Date, organizationId?: string) => RawBuilder<unknown>;
  /** The affiliate's setting that lets the e-mail go. */
  setting: 'email_commissions' | 'email_payouts';
  mail: (row: NoticeRow, links: { baseUrl: string; organizationId: string }) => Mail;
}

interface NoticeRow {
  id: string;
  email: string;
  partner_name: string | null;
  merchant: string;
  program: string;
  amount: string;
  currency: string;
  status: string;
  description: string | null;
  approves_at: Date | null;
  method: string;
  reference: string | null;
}

const notNoticed = (kind: Kind['kind'], alias: string) =>
  sql`not exists (select 1 from partner_notices n where n.organization_id = ${sql.ref(`${alias}.organization_id`)} and n.kind = ${sql.lit(kind)} and n.subject_id = ${sql.ref(`${alias}.id`)})`;

/** `alias`'s rows of one organization, or of all. */
const scope = (alias: string, organizationId: string | undefined) =>
  organizationId === undefined ? sql`` : sql`${sql.ref(`${alias}.organization_id`)} = ${organizationId} and `;

/**
 * A commission earned: a sale's (or a positive adjustment's) entry that counts as earned (pending,
 * approved, paid: one on hold for a fraud signal waits until the merchant releases it), made here,
 * not imported (history is not news).
 */
const COMMISSIONS: Kind = {
  kind: 'commission_earned',
  setting: 'email_commissions',
  due: (
    since,
    organizationId,
  ) => sql`select c.id, c.organization_id, c.affiliate_id, c.program_id, c.amount::text as amount, c.currency, c.status, c.description, c.approves_at,
      '' as method, null::text as reference, c.created_at as at
    from commissions c
    where ${scope('c', organizationId)}c.created_at >= ${since} and c.import_id is null and c.amount > 0
      and c.status in ('pending', 'approved', 'paid') and ${notNoticed('commission_earned', 'c')}`,
  mail: (row, links) =>
    commissionEarnedMail(
      {
        to: row.email,
        name: row.partner_name,
        amount: payoutAmountText(row),
        status: row.status as 'pending' | 'approved' | 'paid',
        description: row.description,
        approvesAt: row.approves_at,
      },
      { merchant: row.merchant, program: row.program },
      links,
    ),
};

/** A payout sent: one that is `paid` (a rail's confirmed, or marked paid by the merchant), made here, not imported. */
const PAYOUTS: Kind = {
  kind: 'payout_sent',
  setting: 'email_payouts',
  due: (
    since,
    organizationId,
  ) => sql`select p.id, p.organization_id, p.affiliate_id, p.program_id, p.amount::text as amount, p.currency, p.status, null::text as description, null::timestamptz as approves_at,
      p.method, coalesce(p.provider_reference, p.reference) as reference, coalesce(p.paid_at, p.created_at) as at
    from payouts p
    where ${scope('p', organizationId)}coalesce(p.paid_at, p.created_at) >= ${since} and p.import_id is null
      and p.status = 'paid' and ${notNoticed('payout_sent', 'p')}`,
  mail: (row, links) =>
    payoutSentMail(
      {
        to: row.email,
        name: row.partner_name,
        amount: payoutAmountText(row),
        method: row.method,
        reference: row.reference,
      },
      { merchant: row.merchant, program: row.program },
      links,
    ),
};

/**
 * E-mails to partners when they earn a commission and when a payout is sent (issue 47, item 10),
 * sent after the sale's or the payout's transaction has committed, never inside it: a round finds
 * what is not announced yet and, per organization and kind, in one transaction, writes a
 * `partner_notices` row for each (its primary key: once per commission or payout, whichever
 * instance gets there first; a concurrent round's insert waits, then does nothing) and queues the
 * e-mail of each whose partner has the e-mail on (mail-queue.ts, through the test-mode check:
 * a test organization's are kept as test e-mails). Every path that makes a commission or pays a
 * payout (the hot lane's batches, renewals, webhooks, the dashboard) is covered without touching
 * it, and a mail server that is down fails no sale and no payout: the queue tries again.
 */
export class PartnerNotices {
  private readonly db: Db;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = true;
  /** Set by stop(): a round in progress ends between two batches (runOnce). */
  private stopRequested = false;
  private since: Date | undefined;
  readonly intervalMs: number;
  private readonly lookbackHours: number;
  private readonly batchSize: number;

  constructor(
    orm: MikroORM,
    private readonly mailer: OrganizationMailer,
    private readonly logger: Logger,
    private readonly publicBaseUrl: string,
    options: PartnerNoticesOptions = {},
  ) {
    this.db = Db.of(orm);
    this.intervalMs = options.intervalMs ?? 5_000;
    this.lookbackHours = options.lookbackHours ?? 72;
    this.batchSize = options.batchSize ?? 200;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.stopRequested = false;
    this.schedule(0);
  }

  /** Stops the rounds; resolves once a round in progress has ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.stopRequested = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /** One round: every commission and payout not announced yet. Answers how many e-mails were queued. */
  async runOnce(): Promise<number> {
    const since = await this.windowStart();
    let queued = 0;
    for (const kind of [COMMISSIONS, PAYOUTS]) {
      const organizations = await this.db.rows(
        sql<{ organization_id: string }>`select distinct d.organization_id from (${kind.due(since)}) d limit 1000`,
      );
      for (const { organization_id } of organizations) {
        // A stop ends the round between two batches: under steady sales the batches of a busy
        // organization would otherwise keep coming, and a shutdown would wait for them past its
        // timeout. What is left is announced by the next round (or another instance).
        if (this.stopRequested) return queued;
        try {
          for (;;) {
            const { noticed, sent } = await this.announce(kind, organization_id, since);
            queued += sent;
            if (noticed < this.batchSize || this.stopRequested) break;
          }
        } catch (err) {
          this.logger.error(
            { err, organization_id, kind: kind.kind },
            'partner notices: not sent this round, tried again next',
          );
        }
      }
    }
    return queued;
  }

  private async announce(kind: Kind, organizationId: string, since: Date): Promise<{ noticed: number; sent: number }> {
    await this.mailer.ready?.();
    const result = await this.db.transaction(async (db) => {
      const rows = await db.rows(
        sql<
          NoticeRow & { sent: boolean }
        >`with due as (${kind.due(since, organizationId)} order by at limit ${this.batchSize}),
          noticed as (
            insert into partner_notices (organization_id, kind, subject_id, sent)
            select d.organization_id, ${sql.lit(kind.kind)}, d.id, ${sql.ref(`a.${kind.setting}`)} and a.erased_at is null
            from due d join affiliates a on a.organization_id = d.organization_id and a.id = d.affiliate_id
            on conflict do nothing
            returning subject_id, sent)
        select d.id, d.amount, d.currency, d.status, d.description, d.approves_at, d.method, d.reference, n.sent,
          a.email, a.name as partner_name, p.name as program, o.name as merchant
        from noticed n
        join due d on d.id = n.subject_id
        join affiliates a on a.organization_id = d.organization_id and a.id = d.affiliate_id
        join programs p on p.organization_id = d.organization_id and p.id = d.program_id
        join organizations o on o.id = d.organization_id`,
      );
      const links = { baseUrl: this.publicBaseUrl, organizationId };
      let sent = 0;
      for (const row of rows) {
        if (!row.sent) continue;
        await this.mailer.send(organizationId, kind.mail(row, links), { transaction: db });
        sent++;
      }
      return { noticed: rows.length, sent };
    });
    if (result.sent > 0) this.mailer.wake?.();
    return result;
  }

  /** The lookback, never before notices existed (the migration's time): an upgrade announces nothing of the past. */
  private async windowStart(): Promise<Date> {
    if (!this.since) {
      const row = await this.db.one(
        sql<{ executed_at: Date }>`select executed_at from mikro_orm_migrations where name = ${NOTICES_MIGRATION}`,
      );
      this.since = row?.executed_at ?? new Date();
    }
    const lookback = new Date(Date.now() - this.lookbackHours * 3_600_000);
    return lookback > this.since ? lookback : this.since;
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.runOnce()
        .then(() => undefined)
        .catch((err: unknown) => this.logger.error({ err }, 'partner notices: round failed'))
        .finally(() => this.schedule(this.intervalMs));
    }, delayMs);
    this.timer.unref();
  }
}
