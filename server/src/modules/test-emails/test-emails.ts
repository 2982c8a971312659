import { TEST_EMAILS_LIVE_MESSAGE, type TestEmail } from '@affiliate-attribution/contract';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { Db } from '../../db/sql.js';
import { newRowId } from '../../db/row-ids.js';
import { ForbiddenError } from '../../http/errors.js';
import { decodeCursor, pageLimit, pageOf } from '../../http/pagination.js';
import { iso } from '../../http/serialize.js';
import type { Mail, Mailer, SendOptions } from '../people/mailer.js';
import { brandingLook } from '../branding/branding.js';
import { brandedMail } from '../branding/branded-mail.js';
import { sql } from 'kysely';

interface TestEmailRow {
  id: string;
  recipient: string;
  subject: string;
  text: string;
  created_at: Date;
}

/** What sends the e-mails of an organization's data to its partners and customers. */
export interface OrganizationMailer {
  /** `options.transaction`: the e-mail is queued (or kept as a test e-mail) in that transaction. */
  send(organizationId: string, mail: Mail, options?: SendOptions): Promise<void>;
  /** Before and after such a transaction: the mail queue started, then woken (mailer.ts). */
  ready?(): Promise<void>;
  wake?(): void;
}

/**
 * E-mails to partners and customers (spec/test-mode.md, "What test mode never does"): the data of
 * a test organization (the twin of a live one: organizations.live_organization_id is set) never
 * reaches anyone's inbox. Its e-mails are kept whole in `test_emails` (the twin's rows: the links
 * in them are how the merchant tries the partner's side) and logged; every other organization's
 * go to the mailer. Merchant staff e-mails (dashboard invitations, password resets, sign-in links)
 * are no test data and do not come here: they go to the mailer directly.
 */
export class TestEmails implements OrganizationMailer {
  private readonly db: Db;

  constructor(
    orm: MikroORM,
    private readonly mailer: Mailer,
    private readonly logger: Logger,
  ) {
    this.db = Db.of(orm);
  }

  /**
   * The one place every e-mail to a partner goes through: it takes the merchant's branding here
   * (brandedMail: their sender name, logo and colour), whichever module wrote it.
   */
  async send(organizationId: string, written: Mail, options: SendOptions = {}): Promise<void> {
    const db = options.transaction ?? this.db;
    const look = await brandingLook(db, organizationId);
    const mail = look ? brandedMail(written, look) : written;
    if (!(await this.isTest(organizationId, db))) return this.mailer.send(mail, options);
    const id = newRowId();
    await db.rows(
      sql`insert into test_emails (id, organization_id, recipient, subject, text) values (${id}, ${organizationId}, ${mail.to}, ${mail.subject}, ${mail.text})`,
    );
    // Logged without its text, which may carry a sign-in link: GET /api/test-emails shows it whole.
    this.logger.info(
      { mail: { to: mail.to, subject: mail.subject }, organization_id: organizationId, test_email_id: id },
      `test mode: e-mail to ${mail.to} not sent, kept as a test e-mail: ${mail.subject}`,
    );
  }

  /** GET /api/test-emails: the twin's e-mails, newest first; a live organization is refused. */
  async list(
    organizationId: string,
    query: { limit?: number | undefined; cursor?: string | undefined },
  ): Promise<{ test_emails: TestEmail[]; next_cursor: string | null }> {
    if (!(await this.isTest(organizationId))) throw new ForbiddenError(TEST_EMAILS_LIVE_MESSAGE);
    const limit = pageLimit(query.limit);
    const after = decodeCursor(query.cursor);
    const columns = 'id, recipient, subject, text, created_at';
    const rows = after
      ? await this.db.rows(
          sql<TestEmailRow>`select ${sql.raw(columns)} from test_emails where organization_id = ${organizationId} and (created_at, id) < (${after.at}, ${after.id}) order by created_at desc, id desc limit ${limit + 1}`,
        )
      : await this.db.rows(
          sql<TestEmailRow>`select ${sql.raw(columns)} from test_emails where organization_id = ${organizationId} order by created_at desc, id desc limit ${limit + 1}`,
        );
    const page = pageOf(rows, limit, (row) => ({ at: row.created_at, id: row.id }));
    return {
      test_emails: page.items.map((row) => ({
        id: row.id,
        to: row.recipient,
        subject: row.subject,
        text: row.text,
        created_at: iso(row.created_at),
        livemode: false as const,
      })),
      next_cursor: page.next_cursor,
    };
  }

  async ready(): Promise<void> {
    await this.mailer.ready?.();
  }

  wake(): void {
    this.mailer.wake?.();
  }

  private async isTest(organizationId: string, db: Db = this.db): Promise<boolean> {
    const row = await db.one(
      sql<{ livemode: boolean }>`select livemode from organizations where id = ${organizationId}`,
    );
    return row?.livemode === false;
  }
}
