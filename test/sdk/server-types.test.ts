/**
 * Type tests of `@affiliate-attribution/sdk/server`: the helpers fit the frameworks the guide
 * shows (Express, node:http, a Fetch Request such as Next.js's NextRequest), and a wrong option
 * does not compile. Checked by tsc (the root project and test/sdk/tsconfig.typecheck.json);
 * the functions below never run.
 */
import { createServer } from 'node:http';
import express from 'express';
import { describe, expectTypeOf, it } from 'vitest';
import { createFirstPartyProxy, createReferralMiddleware, referralCookie } from '../../client-sdk/src/server/index.js';

const options = { apiKey: 'svc-x', baseUrl: 'https://affiliates.example.com' };

describe('server entry types', () => {
  it('mounts in Express and node:http, and takes a Fetch Request', () => {
    const mount = () => {
      const app = express();
      app.use(createReferralMiddleware(options));
      app.use(createFirstPartyProxy({ baseUrl: options.baseUrl, apiKey: options.apiKey, prefix: '/_aff' }));
      const referral = createReferralMiddleware({
        ...options,
        trustProxy: 1,
        cookieDomain: '.example.com',
        timeoutMs: 300,
        logger: console,
      });
      const proxy = createFirstPartyProxy({ baseUrl: options.baseUrl });
      createServer((req, res) => proxy(req, res, () => referral(req, res, () => res.end())));
    };
    const edge = async (request: Request) => {
      expectTypeOf(await referralCookie(request, { ...options, ip: '203.0.113.1' })).toEqualTypeOf<
        string | undefined
      >();
      // @ts-expect-error: trustProxy is a boolean or a hop count
      await referralCookie(request, { ...options, trustProxy: 'yes' });
      // @ts-expect-error: the API key is required
      createReferralMiddleware({ baseUrl: options.baseUrl });
    };
    void mount;
    void edge;
  });
});
