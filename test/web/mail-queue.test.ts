import { describe, expect, it } from 'vitest';
import { TEST_ADMIN_TOKEN } from '../support/server.js';
import { call, startService } from './support/people.js';
import { startSmtpReceiver } from './support/smtp.js';

/**
 * E-mails sent from requests go through the job queue (modules/people/mail-queue.ts): with the mail
 * server down, the request answers what it did, and the e-mail goes out once the server is back.
 */
const admin = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };
const fastRetries = { retryDelaySeconds: 1, retryDelayMaxSeconds: 1, pollingIntervalSeconds: 0.5 };

/** An SMTP address where nothing listens (a receiver started, then stopped): the mail server is down. */
async function downMailServer(): Promise<{ url: string; port: number }> {
  const probe = await startSmtpReceiver();
  await probe.close();
  return { url: probe.url, port: Number(new URL(probe.url).port) };
}

async function waitFor<T>(what: string, find: () => T | undefined, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = find();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('e-mail while the mail server is down', () => {
  it(
    'an invitation answers 201 once and is saved once; its e-mail arrives when the server is back',
    { timeout: 60_000 },
    async () => {
      const down = await downMailServer();
      const lines: string[] = [];
      const service = await startService(
        { SMTP_URL: down.url },
        undefined,
        { write: (line: string) => void lines.push(line) },
        { mailRetry: fastRetries },
      );
      let smtp: Awaited<ReturnType<typeof startSmtpReceiver>> | undefined;
      try {
        const org = await call(service.baseUrl, 'POST', '/admin/organizations', {
          headers: admin,
          body: { name: 'Down Mail Co' },
        });
        const organizationId = org.body.data.organization.id as string;
        const email = `invitee-${Date.now()}@example.com`;
        const invited = await call(service.baseUrl, 'POST', `/admin/organizations/${organizationId}/invitations`, {
          headers: admin,
          body: { email },
        });
        expect(invited.status).toBe(201);
        expect(invited.body).toMatchObject({
          success: true,
          data: { invitation: { email, role: 'owner', status: 'pending' } },
        });
        const acceptUrl = invited.body.data.accept_url as string;
        const count = async () =>
          (
            await service.db.orm.em
              .getConnection()
              .execute<{ n: number }[]>('select count(*)::int as n from invitations where organization_id = ?', [
                organizationId,
              ])
          )[0].n;
        expect(await count()).toBe(1);
        // The queue tried and failed (the server is down), and says it will try again.
        const failed = await waitFor('a failed attempt', () =>
          lines
            .map((l) => JSON.parse(l))
            .find((l) => l.msg === 'e-mail could not be sent; it will be tried again' && l.to === email),
        );
        expect(failed.level).toBe(40);
        expect(JSON.stringify(failed)).not.toContain(new URL(acceptUrl).searchParams.get('token')!);

        smtp = await startSmtpReceiver(down.port);
        const mail = await smtp.next(email, 20_000);
        expect(mail.subject).toBe("You are invited to Down Mail Co's affiliate dashboard");
        expect(mail.text).toContain(acceptUrl);
        await new Promise((resolve) => setTimeout(resolve, 1_500));
        expect(smtp.mails.filter((m) => m.to.includes(email))).toHaveLength(1);
        expect(await count()).toBe(1);
      } finally {
        await service.close();
        await smtp?.close();
      }
    },
  );

  it(
    'an e-mail that still cannot be sent after its retries is given up, logged at error without its text',
    { timeout: 60_000 },
    async () => {
      const down = await downMailServer();
      const lines: string[] = [];
      const service = await startService(
        { SMTP_URL: down.url },
        undefined,
        { write: (line: string) => void lines.push(line) },
        { mailRetry: { ...fastRetries, retryLimit: 1 } },
      );
      try {
        const org = await call(service.baseUrl, 'POST', '/admin/organizations', {
          headers: admin,
          body: { name: 'Never Mail Co' },
        });
        const email = `never-${Date.now()}@example.com`;
        const invited = await call(
          service.baseUrl,
          'POST',
          `/admin/organizations/${org.body.data.organization.id}/invitations`,
          { headers: admin, body: { email } },
        );
        expect(invited.status).toBe(201);
        const givenUp = await waitFor('the e-mail given up', () =>
          lines.map((l) => JSON.parse(l)).find((l) => l.level === 50 && l.to === email),
        );
        expect(givenUp).toMatchObject({
          msg: 'e-mail given up after 2 attempts: not sent',
          subject: "You are invited to Never Mail Co's affiliate dashboard",
          attempts: 2,
        });
        expect(JSON.stringify(givenUp)).not.toContain(new URL(invited.body.data.accept_url).searchParams.get('token')!);
      } finally {
        await service.close();
      }
    },
  );
});
