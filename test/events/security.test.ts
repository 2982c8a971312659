import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { createApp } from '../../server/src/app.js';
import { UrlGuard, isForbiddenAddress } from '../../server/src/modules/events/url-guard.js';
import { SECRET_PURPOSE, SecretBox } from '../../server/src/security/secret-box.js';
import { createOrganization } from '../support/api.js';
import { testServer } from '../support/server.js';

describe('endpoint URLs (SSRF)', () => {
  const strict = new UrlGuard(false);

  it.each([
    '127.0.0.1', '127.255.0.9', '10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0',
    '::1', '::', 'fe80::1', 'fd00:ec2::254', 'fc00::1', '::ffff:127.0.0.1', '::ffff:a9fe:a9fe', '64:ff9b::a9fe:a9fe', '224.0.0.1', 'ff02::1',
  ])('refuses %s', (address) => {
    expect(isForbiddenAddress(address)).toBe(true);
  });

  it.each(['93.184.216.34', '8.8.8.8', '172.32.0.1', '2606:4700::1111'])('accepts the public address %s', (address) => {
    expect(isForbiddenAddress(address)).toBe(false);
  });

  it.each([
    ['http://93.184.216.34/hook', 'must be an https:// URL'],
    ['https://127.0.0.1/hook', 'must not point at a loopback, private, link-local or metadata address'],
    ['https://[::1]:8443/hook', 'must not point at a loopback, private, link-local or metadata address'],
    ['https://169.254.169.254/latest/meta-data', 'must not point at a loopback, private, link-local or metadata address'],
    ['https://localhost/hook', 'must not point at a loopback, private, link-local or metadata address'],
    ['https://user:pass@93.184.216.34/hook', 'must not contain credentials'],
    ['ftp://93.184.216.34/hook', 'must be an https:// URL'],
  ])('at creation: %s is refused (%s)', async (url, message) => {
    expect(await strict.problem(url)).toBe(message);
  });

  it('accepts an https URL on a public address, and anything http(s) when private URLs are allowed', async () => {
    expect(await strict.problem('https://93.184.216.34/hook')).toBeUndefined();
    expect(await new UrlGuard(true).problem('http://127.0.0.1:3000/hook')).toBeUndefined();
  });

  it('at delivery: the socket lookup refuses a name that resolves to a forbidden address (DNS can change)', async () => {
    const error = await new Promise<Error | null>((resolve) => strict.lookup('localhost', {}, (err) => resolve(err)));
    expect(error?.message).toMatch(/resolves to an address that is not allowed/);
    expect(strict.literalProblem(new URL('https://10.0.0.1/x'))).toBe('address not allowed');
  });

  describe('the API', () => {
    let server: Server | undefined;
    afterAll(() => server?.close());

    it('answers 400 naming the url for a private or plain-http endpoint', async () => {
      const { db } = await testServer();
      const org = await createOrganization();
      const { listener } = createApp({ orm: db.orm, config: { ADMIN_TOKEN: undefined, API_KEY_CACHE_TTL_MS: 0 } });
      server = await new Promise<Server>((resolve) => {
        const s = createServer(listener).listen(0, '127.0.0.1', () => resolve(s));
      });
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      for (const [url, message] of [
        ['https://127.0.0.1/hooks', 'url: must not point at a loopback, private, link-local or metadata address'],
        ['http://93.184.216.34/hooks', 'url: must be an https:// URL'],
      ]) {
        const res = await fetch(`${base}/api/webhook-endpoints`, {
          method: 'POST',
          headers: { authorization: `Bearer ${org.key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ url, events: ['conversion.created'] }),
        });
        expect(res.status).toBe(400);
        expect(await res.json()).toEqual({ success: false, message });
      }
    });
  });
});

describe('secrets at rest', () => {
  const key = Buffer.alloc(32, 9).toString('base64');

  it('seals with AES-256-GCM under ENCRYPTION_KEY: a fresh IV each time, bound to its purpose', () => {
    const box = new SecretBox(key);
    const a = box.seal('whsec_abc', SECRET_PURPOSE.webhookEndpoint);
    const b = box.seal('whsec_abc', SECRET_PURPOSE.webhookEndpoint);
    expect(a).toMatch(/^enc:v1:/);
    expect(a).not.toBe(b);
    expect(box.open(a, SECRET_PURPOSE.webhookEndpoint)).toBe('whsec_abc');
    expect(() => box.open(a, SECRET_PURPOSE.integration)).toThrow();
    expect(() => new SecretBox(Buffer.alloc(32, 1).toString('hex')).open(a, SECRET_PURPOSE.webhookEndpoint)).toThrow();
  });

  it('without a key: stored as given, and an encrypted value cannot be read', () => {
    const none = new SecretBox(undefined);
    expect(none.seal('plain', SECRET_PURPOSE.integration)).toBe('plain');
    expect(none.open('plain', SECRET_PURPOSE.integration)).toBe('plain');
    expect(() => none.open(new SecretBox(key).seal('x', SECRET_PURPOSE.integration), SECRET_PURPOSE.integration)).toThrow(/ENCRYPTION_KEY/);
    expect(() => new SecretBox('too-short')).toThrow(/32 bytes/);
  });
});
