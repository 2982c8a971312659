import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import type { Page } from 'playwright-core';
import Stripe from 'stripe';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { EventDelivery } from '../../server/src/modules/events/delivery.js';
import { SecretBox } from '../../server/src/security/secret-box.js';
import { chromiumForBlock, describeInBrowser } from '../snippet/support/browser.js';
import {
  buildDashboard,
  capture,
  DESKTOP,
  pageErrors,
  PHONE,
  seriousViolations,
  sidewaysScrolling,
  signedInPage,
  withFailureScreenshots,
} from './support/dashboard.js';
import { call, ownerSession, startService, type PeopleServer } from './support/people.js';

/**
 * The dashboard's webhook pages in Chromium, against a real service delivering events in process:
 * outbound endpoints and their delivery log on Developers, provider webhooks received on
 * Integrations.
 */
/** The page's data may take a few seconds on a loaded machine. */
const POLL = { timeout: 10_000 };

let service: PeopleServer;
let delivery: EventDelivery;
let base: string;

/** A receiver of the service's deliveries, on 127.0.0.1 (allowed by WEBHOOK_ALLOW_PRIVATE_URLS): 503 until `healthy`. */
const receiver = {
  healthy: false,
  received: [] as { id: string; status: number }[],
  server: undefined as Server | undefined,
  url: '',
};

beforeAll(async () => {
  buildDashboard();
  service = await startService({ WEBHOOK_ALLOW_PRIVATE_URLS: true });
  base = service.baseUrl;
  // The automatic retry waits a minute: a retry seen within the test is the one the dashboard asked for.
  delivery = new EventDelivery(service.db.orm, new SecretBox(undefined), pino({ level: 'silent' }), {
    allowPrivateUrls: true,
    retryDelaysMs: [60_000],
    relayIntervalMs: 100,
  });
  await delivery.start();
  receiver.server = createServer((req, res) => {
    req.resume().on('end', () => {
      const status = receiver.healthy ? 200 : 503;
      receiver.received.push({ id: String(req.headers['webhook-id']), status });
      res.writeHead(status, { 'content-type': 'text/plain' }).end(status === 200 ? 'ok' : 'busy, try later');
    });
  });
  await new Promise<void>((resolve) => receiver.server!.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(receiver.server.address() as AddressInfo).port}/hooks`;
}, 120_000);
afterAll(async () => {
  await delivery?.stop();
  receiver.server?.close();
  await service?.close();
});

/** Every serious axe-core violation, and sideways scrolling (of the page, or of a table on a phone), at both widths. */
async function checkBothWidths(page: Page, name: string): Promise<string[]> {
  const problems: string[] = [];
  for (const viewport of [DESKTOP, PHONE]) {
    await page.setViewportSize(viewport);
    await page.waitForTimeout(100);
    problems.push(...(await seriousViolations(page)).map((v) => `${name} @${viewport.width}: ${v}`));
    const overflow = await page.evaluate(
      () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
    );
    if (overflow > 0) problems.push(`${name} @${viewport.width}: scrolls sideways by ${overflow}px`);
    // On a phone the tables are cards: not one scrolls sideways inside its frame either.
    if (viewport === PHONE) problems.push(...(await sidewaysScrolling(page)).map((p) => `${name} @375: ${p}`));
  }
  await page.setViewportSize(DESKTOP);
  return problems;
}

describeInBrowser('webhooks in the dashboard', () => {
  const browser = chromiumForBlock();

  it(
    'an owner adds an endpoint (its secret shown once), sees a failed delivery in the log and retries it, rotates the secret, deletes the endpoint',
    { timeout: 120_000 },
    async () => {
      const owner = await ownerSession(base);
      const key = { authorization: `Bearer ${owner.apiKey}` };
      const { context, page } = await signedInPage(browser(), base, owner.cookie);
      const errors = pageErrors(page);
      await withFailureScreenshots(page, 'webhook-endpoints', async () => {
        await page.goto(`${base}/dashboard/developers`);
        await page.getByText('No webhook endpoint').waitFor();
        await page.getByRole('button', { name: 'Add endpoint' }).click();
        const form = page.getByRole('form', { name: 'Add a webhook endpoint' });

        // The API's errors, next to the fields they name.
        await form.getByLabel('Endpoint URL').fill('not a url');
        await form.getByRole('button', { name: 'Add endpoint' }).click();
        const urlField = form.locator('.field', { has: page.getByLabel('Endpoint URL') });
        await expect.poll(() => urlField.getByRole('alert').textContent(), POLL).toMatch(/Invalid url/i);
        await form.getByLabel('Endpoint URL').fill(receiver.url);
        await form.getByLabel('Every event').uncheck();
        await form.getByRole('button', { name: 'Add endpoint' }).click();
        await expect
          .poll(() => form.getByRole('group', { name: 'Events' }).getByRole('alert').textContent(), POLL)
          .toMatch(/at least 1/);
        await capture(page, 'webhook-endpoint-form');
        await form.getByLabel('affiliate.created').check();
        await form.getByLabel('Description (optional)').fill('CRM sync');
        await form.getByRole('button', { name: 'Add endpoint' }).click();

        // The secret, shown once.
        const secret = (await page.getByTestId('new-endpoint-secret').textContent())!;
        expect(secret).toMatch(/^whsec_/);
        const row = page
          .getByRole('region', { name: 'Webhook endpoints' })
          .getByRole('row', { name: new RegExp(receiver.url) });
        await expect.poll(() => row.textContent(), POLL).toMatch(/CRM sync.*affiliate\.created.*enabled/);
        await capture(page, 'webhook-endpoints-secret');
        await page.getByRole('button', { name: 'I have stored it' }).click();

        // An event: the receiver answers 503, the log shows it, with the next attempt.
        const program = await call(base, 'POST', '/api/programs', {
          headers: key,
          body: { name: 'Main', commission_value: 20 },
        });
        const affiliate = await call(base, 'POST', '/api/affiliates', {
          headers: key,
          body: { email: 'hooked@example.com', program_id: program.body.data.program.id },
        });
        expect(affiliate.status).toBe(201);
        await expect.poll(() => receiver.received.length, { timeout: 15_000 }).toBeGreaterThanOrEqual(1);
        await row.getByRole('button', { name: `Deliveries to ${receiver.url}` }).click();
        const log = page.getByRole('region', { name: 'Deliveries' });
        const failed = log.getByRole('row', { name: /affiliate\.created/ });
        await expect.poll(() => failed.textContent(), { timeout: 15_000 }).toMatch(/pending\s*1\s*HTTP 503/);
        expect(await failed.getByRole('cell').nth(4).textContent()).not.toBe('—'); // next attempt scheduled
        await failed.getByText('Body').click();
        await failed.getByText('busy, try later').waitFor();
        await capture(page, 'webhook-deliveries');

        // Retry: sent again now, with the same webhook-id; the receiver takes it.
        receiver.healthy = true;
        const [retried] = await Promise.all([
          page.waitForResponse((r) => /\/api\/webhook-deliveries\/[^/]+\/retry$/.test(r.url())),
          failed.getByRole('button', { name: /^Retry the affiliate\.created delivery/ }).click(),
        ]);
        expect(retried.status()).toBe(202);
        await expect.poll(() => failed.textContent(), { timeout: 15_000 }).toMatch(/succeeded\s*2\s*HTTP 200/);
        expect(receiver.received.map((r) => r.status)).toEqual([503, 200]);
        expect(new Set(receiver.received.map((r) => r.id)).size).toBe(1);
        const problems = await checkBothWidths(page, 'developers with the delivery log');

        // Never shown again.
        await page.reload();
        await page.getByRole('heading', { name: 'Webhook endpoints' }).waitFor();
        await row.waitFor();
        expect(await page.content()).not.toContain(secret);

        // Rotation: asks first, then a new secret, shown once.
        await row.getByRole('button', { name: `Rotate secret of ${receiver.url}` }).click();
        await page.getByRole('dialog').getByRole('button', { name: 'Rotate secret' }).click();
        const rotated = (await page.getByTestId('new-endpoint-secret').textContent())!;
        expect(rotated).toMatch(/^whsec_/);
        expect(rotated).not.toBe(secret);
        await expect.poll(() => row.textContent(), POLL).toMatch(/previous secret valid until/);

        // Deleting asks first; Cancel keeps it.
        await row.getByRole('button', { name: `Delete ${receiver.url}` }).click();
        await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
        expect(
          (await call(base, 'GET', '/api/webhook-endpoints', { headers: key })).body.data.webhook_endpoints,
        ).toHaveLength(1);
        await row.getByRole('button', { name: `Delete ${receiver.url}` }).click();
        await page.getByRole('dialog').getByRole('button', { name: 'Delete endpoint' }).click();
        await page.getByText('No webhook endpoint').waitFor();
        expect(
          (await call(base, 'GET', '/api/webhook-endpoints', { headers: key })).body.data.webhook_endpoints,
        ).toEqual([]);
        expect(problems, problems.join('\n')).toEqual([]);
        expect(errors).toEqual([]);
      });
      await context.close();
    },
  );

  it(
    'the Integrations page lists the webhooks received: a processed one and a rejected one with its reason, filtered by outcome',
    { timeout: 90_000 },
    async () => {
      const owner = await ownerSession(base);
      const key = { authorization: `Bearer ${owner.apiKey}` };
      const secret = 'whsec_dashboard_0123456789abcdef';
      expect(
        (await call(base, 'PUT', '/api/integrations/stripe', { headers: key, body: { signing_secret: secret } }))
          .status,
      ).toBe(200);
      const program = await call(base, 'POST', '/api/programs', {
        headers: key,
        body: { name: 'Main', commission_value: 30 },
      });
      await call(base, 'POST', '/api/affiliates', {
        headers: key,
        body: { email: 'jane@example.com', program_id: program.body.data.program.id, slug: 'jane' },
      });
      const now = Math.floor(Date.now() / 1000);
      const invoice = {
        id: 'in_dash_1',
        object: 'invoice',
        billing_reason: 'subscription_create',
        amount_due: 4900,
        amount_paid: 4900,
        amount_remaining: 0,
        currency: 'usd',
        customer: 'cus_dash_1',
        customer_email: 'buyer@example.com',
        status: 'paid',
        total: 4900,
        total_taxes: [],
        metadata: {},
        parent: {
          type: 'subscription_details',
          quote_details: null,
          subscription_details: { metadata: { ref_svc_affiliate: 'jane' }, subscription: 'sub_dash_1' },
        },
        status_transitions: { finalized_at: now - 10, paid_at: now - 5 },
        created: now - 10,
      };
      const send = (body: string, signingSecret: string) =>
        fetch(`${base}/webhooks/stripe/${owner.organization.id}`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'stripe-signature': Stripe.webhooks.generateTestHeaderString({ payload: body, secret: signingSecret }),
          },
          body,
        });
      const paid = JSON.stringify({
        id: 'evt_dash_paid',
        object: 'event',
        type: 'invoice.paid',
        created: now,
        data: { object: invoice },
        livemode: true,
        pending_webhooks: 1,
        request: { id: null },
      });
      expect((await send(paid, secret)).status).toBe(200);
      expect(
        (await send(paid.replace('evt_dash_paid', 'evt_dash_forged'), 'whsec_not_the_merchants_secret_00')).status,
      ).toBe(400);

      const { context, page } = await signedInPage(browser(), base, owner.cookie);
      await withFailureScreenshots(page, 'webhooks-received', async () => {
        await page.goto(`${base}/dashboard/integrations`);
        const received = page.getByRole('region', { name: 'Received webhooks' });
        const processed = received.getByRole('row', { name: /invoice\.paid/ });
        await expect
          .poll(() => processed.textContent(), POLL)
          .toMatch(/Stripe.*evt_dash_paid.*processed.*Conversion in_dash_1 recorded/);
        const rejected = received.getByRole('row', { name: /rejected/ });
        await expect
          .poll(() => rejected.textContent(), POLL)
          .toMatch(/Stripe.*not read \(unverified\).*rejected.*Invalid Stripe-Signature/);
        expect(await received.textContent()).not.toContain('evt_dash_forged');
        await capture(page, 'webhooks-received');
        const problems = await checkBothWidths(page, 'integrations');

        await page.getByLabel('Outcome').selectOption('rejected');
        await expect.poll(() => received.getByRole('row').count(), POLL).toBe(2); // the header and the rejection
        await rejected.waitFor();
        await page.getByLabel('Outcome').selectOption('ignored');
        await page.getByText('No webhook matches').waitFor();
        expect(problems, problems.join('\n')).toEqual([]);
      });
      await context.close();
    },
  );
});
