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
 * Where the dashboard's e-mails go (invitations, password resets). SMTP delivery is not built yet:
 * every message is written to the log at level `info` (`mail` field), which is how the trying-it-
 * out install and the operator's first invitation work (the invitation's link is also in the
 * answer of the call that created it).
 */
export class LogMailer implements Mailer {
  constructor(private readonly logger: Logger) {}

  async send(mail: Mail): Promise<void> {
    this.logger.info({ mail }, `e-mail to ${mail.to}: ${mail.subject}`);
  }
}
