import nodemailer, { type Transporter } from 'nodemailer';
import type { Logger } from 'pino';

export interface Mail {
  to: string;
  subject: string;
  text: string;
}

export interface Mailer {
  send(mail: Mail): Promise<void>;
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
    this.logger.info({ mail }, `e-mail to ${mail.to}: ${mail.subject}`);
  }
}

/**
 * SMTP through nodemailer (`SMTP_URL`, e.g. `smtps://user:pass@smtp.example.com`, from `MAIL_FROM`).
 * A message that cannot be sent is logged without its text (it may carry a sign-in link, a
 * credential) and the error is thrown to the caller, which decides whether the request fails.
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
    try {
      await this.transport.sendMail({ from: this.from, to: mail.to, subject: mail.subject, text: mail.text });
      this.logger.info({ to: mail.to, subject: mail.subject }, 'e-mail sent');
    } catch (err) {
      this.logger.error({ err, to: mail.to, subject: mail.subject }, 'e-mail could not be sent');
      throw err;
    }
  }
}

export const DEFAULT_MAIL_FROM = 'Affiliate program <no-reply@localhost>';

export function createMailer(config: { SMTP_URL?: string; MAIL_FROM?: string }, logger: Logger): Mailer {
  return config.SMTP_URL ? new SmtpMailer(config.SMTP_URL, config.MAIL_FROM ?? DEFAULT_MAIL_FROM, logger) : new LogMailer(logger);
}
