import type { MikroORM } from '@mikro-orm/postgresql';
import type { Job, PgBoss } from 'pg-boss';
import type { Logger } from 'pino';
import { startQueue } from '../../jobs/queue.js';
import type { SecretBox } from '../../security/secret-box.js';
import type { Mail, Mailer, SendOptions } from './mailer.js';

export const MAIL_QUEUE = 'mail';
/** The purpose label of a queued e-mail's sealed text (security/secret-box.ts). */
export const MAIL_TEXT_PURPOSE = 'mail-queue.text';

/** How a queued e-mail is tried again: pg-boss's exponential backoff from `retryDelaySeconds`, at most `retryDelayMaxSeconds` apart. */
export interface MailRetry {
  /** Attempts after the first (default 10: with the defaults below, about three hours of trying). */
  retryLimit: number;
  retryDelaySeconds: number;
  retryDelayMaxSeconds: number;
  /** How often an idle worker looks for e-mails queued by another instance, or due again. */
  pollingIntervalSeconds: number;
}

export const MAIL_RETRY_DEFAULTS: MailRetry = {
  retryLimit: 10,
  retryDelaySeconds: 15,
  retryDelayMaxSeconds: 3600,
  pollingIntervalSeconds: 2,
};

interface MailJob {
  to: string;
  subject: string;
  /** Sealed under ENCRYPTION_KEY when it is set: the text may carry a sign-in link. */
  text: string;
  fromName?: string;
  /** Sealed like the text (the same words). */
  html?: string;
}

/**
 * E-mails sent from requests go through the service's job queue (pg-boss, jobs/queue.ts), never
 * straight to SMTP: the request answers what it did (the invitation is saved: 201) whether or not
 * the mail server answers now, and the e-mail is sent by a worker of the queue, tried again with
 * exponential backoff while the server is down, and logged at `error` (without its text) when it
 * is given up. Queued in the transaction that writes the row it is about (`send(mail, {
 * transaction })`), the e-mail exists exactly when that row does: a rolled-back invitation sends
 * nothing, a committed one is never lost.
 *
 * The text, which may carry a one-time link, is sealed with ENCRYPTION_KEY (when set) while it
 * waits, and the job is deleted a minute after it is sent or given up.
 */
export class MailQueue implements Mailer {
  private boss: Promise<PgBoss> | undefined;
  private workerId: string | undefined;
  private readonly retry: MailRetry;

  constructor(
    private readonly orm: MikroORM,
    /** What actually sends: SMTP (mailer.ts). */
    private readonly transport: Mailer,
    private readonly secrets: SecretBox,
    private readonly logger: Logger,
    retry: Partial<MailRetry> = {},
  ) {
    this.retry = { ...MAIL_RETRY_DEFAULTS, ...retry };
  }

  /** Starts the queue and its worker once: at boot in main.ts (so e-mails queued before a restart go out), else on the first e-mail. */
  start(): Promise<PgBoss> {
    this.boss ??= (async () => {
      const boss = await startQueue(this.orm, this.logger);
      await boss.createQueue(MAIL_QUEUE, this.jobOptions());
      // pg-boss looks a queue up once, then caches it: done here, on the pool, so that a send inside
      // a caller's transaction uses that transaction's connection only (the embedded database has one).
      await boss.getJobById(MAIL_QUEUE, '00000000-0000-4000-8000-000000000000');
      this.workerId = await boss.work<MailJob>(
        MAIL_QUEUE,
        { batchSize: 1, pollingIntervalSeconds: this.retry.pollingIntervalSeconds },
        async ([job]) => {
          if (job) await this.deliver(job);
        },
      );
      return boss;
    })();
    this.boss.catch(() => (this.boss = undefined));
    return this.boss;
  }

  async stop(): Promise<void> {
    const boss = await this.boss?.catch(() => undefined);
    await boss?.stop({ graceful: true, timeout: 5_000, close: false });
  }

  async send(mail: Mail, options: SendOptions = {}): Promise<void> {
    const boss = await this.start();
    const data: MailJob = {
      to: mail.to,
      subject: mail.subject,
      text: this.secrets.seal(mail.text, MAIL_TEXT_PURPOSE),
      ...(mail.fromName ? { fromName: mail.fromName } : {}),
      ...(mail.html ? { html: this.secrets.seal(mail.html, MAIL_TEXT_PURPOSE) } : {}),
    };
    await boss.send(MAIL_QUEUE, data, {
      ...this.jobOptions(),
      ...(options.transaction ? { db: options.transaction.jobDatabase() } : {}),
    });
    if (!options.transaction) this.wake();
  }

  async ready(): Promise<void> {
    await this.start();
  }

  wake(): void {
    const workerId = this.workerId;
    if (!workerId) return;
    void this.boss?.then((boss) => boss.notifyWorker(workerId)).catch(() => undefined);
  }

  private jobOptions() {
    return {
      retryLimit: this.retry.retryLimit,
      retryDelay: this.retry.retryDelaySeconds,
      retryBackoff: true,
      retryDelayMax: this.retry.retryDelayMaxSeconds,
      expireInSeconds: 120,
      deleteAfterSeconds: 60,
    };
  }

  private async deliver(job: Job<MailJob>): Promise<void> {
    const { to, subject } = job.data;
    try {
      const { fromName, html } = job.data;
      await this.transport.send({
        to,
        subject,
        text: this.secrets.open(job.data.text, MAIL_TEXT_PURPOSE),
        ...(fromName ? { fromName } : {}),
        ...(html ? { html: this.secrets.open(html, MAIL_TEXT_PURPOSE) } : {}),
      });
    } catch (err) {
      const attempts = job.retryCount + 1;
      if (job.retryCount >= this.retry.retryLimit) {
        this.logger.error({ err, to, subject, attempts }, `e-mail given up after ${attempts} attempts: not sent`);
      } else {
        this.logger.warn({ err, to, subject, attempts }, 'e-mail could not be sent; it will be tried again');
      }
      throw err;
    }
  }
}
