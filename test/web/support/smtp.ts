import type { AddressInfo } from 'node:net';
import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  to: string[];
  from: string;
  subject: string;
  text: string;
  /** The From header's display name ('' without one). */
  fromName?: string;
  /** The HTML part, when the message has one. */
  html?: string;
}

/**
 * A real SMTP server on 127.0.0.1 (the `smtp-server` package): what the service sends through
 * nodemailer (SMTP_URL) arrives here, parsed by mailparser, as a mailbox would show it.
 */
export interface SmtpReceiver {
  url: string;
  mails: ReceivedMail[];
  /** The next mail to `to` not taken yet (waits for it). */
  next(to: string, timeoutMs?: number): Promise<ReceivedMail>;
  close(): Promise<void>;
}

/** `port`: a given one (a mail server coming back where it was); default any free port. */
export async function startSmtpReceiver(port = 0): Promise<SmtpReceiver> {
  const mails: ReceivedMail[] = [];
  const taken = new Set<ReceivedMail>();
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      simpleParser(stream)
        .then((parsed) => {
          mails.push({
            to: session.envelope.rcptTo.map((r) => r.address.toLowerCase()),
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            subject: parsed.subject ?? '',
            text: parsed.text ?? '',
            fromName: parsed.from?.value[0]?.name ?? '',
            ...(typeof parsed.html === 'string' ? { html: parsed.html } : {}),
          });
          callback();
        })
        .catch((err: Error) => callback(err));
    },
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const { port: listening } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${listening}`,
    mails,
    async next(to, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = mails.find((m) => !taken.has(m) && m.to.includes(to.toLowerCase()));
        if (found) {
          taken.add(found);
          return found;
        }
        if (Date.now() > deadline)
          throw new Error(
            `no e-mail to ${to} within ${timeoutMs} ms (received: ${mails.map((m) => `${m.to.join(',')}: ${m.subject}`).join('; ') || 'none'})`,
          );
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The portal sign-in link of an e-mail's text. */
export function signInLinkOf(mail: ReceivedMail): URL {
  const match = /https?:\/\/\S+\/portal\/[0-9a-f-]{36}\/sign-in\/link\?token=[A-Za-z0-9_-]+/.exec(mail.text);
  if (!match) throw new Error(`no sign-in link in: ${mail.text}`);
  return new URL(match[0]);
}
