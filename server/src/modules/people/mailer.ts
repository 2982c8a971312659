import nodemailer, { type Transporter } from 'nodemailer';
import type { Logger } from 'pino';
import type { Db } from '../../db/sql.js';

export interface Mail {
  to: string;
  subject: string;
  text: string;
  /** The From display name (the address stays MAIL_FROM's): e-mails to partners carry the merchant's (modules/branding). */
  fromName?: string;
  /** An HTML part beside the text, with the same words (modules/branding/branded-mail.ts). */
  html?: string;
}

export interface SendOptions {
  /**
   * The transaction that writes the row the e-mail is about (an invitation, a sign-in link): a
   * queued e-mail is queued in it, so it exists exactly when the row does.
   */
  transaction?: Db;
}

export interface Mailer {
  /** Sends the e-mail, or queues it (MailQueue): resolves once it is sent or safely queued. */
  send(mail: Mail, options?: SendOptions): Promise<void>;
  /**
   * Before a transaction that will `send` in it: the queue is started (on its own connection), so
   * that the send inside uses the transaction's connection only (the embedded database has one).
   */
  ready?(): Promise<void>;
  /** After the transaction of a `send` commits: the queue's worker looks for it at once. */
  wake?(): void;
}

/**
 * Without SMTP_URL (the trying-it-out default): every message is written to the log at level
 * `info` (`mail` field), links included, for the operator to forward. That is how the embedded
 * install and the operator's first invitation work (an invitation's link is also in the answer
 * of the call that created it).
 */
export class LogMailer implements Mailer {
  constructor(private readonly logger: Logger) {}

  async send(mail: Mail): Promise<void> {
    // The text says it all (the HTML part carries the same words): the log keeps it readable.
    const { html: _html, ...logged } = mail;
    this.logger.info({ mail: logged }, `e-mail to ${mail.to}: ${mail.subject}`);
  }
}

/**
 * SMTP through nodemailer (`SMTP_URL`, e.g. `smtps://user:pass@smtp.example.com`, from `MAIL_FROM`).
 * A message that cannot be sent is thrown to the caller: the mail queue (mail-queue.ts), which
 * tries it again later and logs each failure without the text (it may carry a sign-in link).
 */
export class SmtpMailer implements Mailer {
  private readonly transport: Transporter;

  constructor(
    smtpUrl: string,
    private readonly from: string,
    private readonly logger: Logger,
  ) {
    this.transport = nodemailer.createTransport(smtpUrl);
  }

  async send(mail: Mail): Promise<void> {
    await this.transport.sendMail({
      from: mail.fromName ? { name: mail.fromName, address: addressOf(this.from) } : this.from,
      to: mail.to,
      subject: mail.subject,
      text: mail.text,
      ...(mail.html ? { html: mail.html } : {}),
    });
    this.logger.info({ to: mail.to, subject: mail.subject }, 'e-mail sent');
  }
}

/** The address of MAIL_FROM (`Name <address>` or a bare address), which a merchant's sender name goes with. */
export function addressOf(from: string): string {
  return /<([^<>]+)>\s*$/.exec(from)?.[1]?.trim() ?? from.trim();
}

export const DEFAULT_MAIL_FROM = 'Affiliate program <no-reply@localhost>';

/** The SMTP transport when SMTP_URL is set (app.ts queues what it sends: MailQueue), else the log. */
export function createMailer(config: { SMTP_URL?: string; MAIL_FROM?: string }, logger: Logger): Mailer {
  return config.SMTP_URL
    ? new SmtpMailer(config.SMTP_URL, config.MAIL_FROM ?? DEFAULT_MAIL_FROM, logger)
    : new LogMailer(logger);
}
