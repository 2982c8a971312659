import type { LookupAddress } from 'node:dns';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { createApp } from '../../server/src/app.js';
import { UrlGuard, isForbiddenAddress, type ResolveAll } from '../../server/src/modules/events/url-guard.js';
import { SECRET_PURPOSE, SecretBox } from '../../server/src/security/secret-box.js';
import { createOrganization } from '../support/api.js';
import { TEST_PUBLIC_BASE_URL, testServer } from '../support/server.js';

describe('endpoint URLs (SSRF)', () => {
  const strict = new UrlGuard(false);

  it.each([
    '127.0.0.1',
    '127.255.0.9',
    '10.1.2.3',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '::1',
    '::',
    'fe80::1',
    'fd00:ec2::254',
    'fc00::1',
    '::ffff:127.0.0.1',
    '::ffff:a9fe:a9fe',
    '64:ff9b::a9fe:a9fe',
    '224.0.0.1',
    'ff02::1',
  ])('refuses %s', (address) => {
    expect(isForbiddenAddress(address)).toBe(true);
  });

  it.each(['93.184.216.34', '8.8.8.8', '172.32.0.1', '2606:4700::1111'])('accepts the public address %s', (address) => {
    expect(isForbiddenAddress(address)).toBe(false);
  });

  // IPv6 forms that carry an IPv4 address (url-guard.ts gives the reason for each decision).
  it.each([
    ['6to4 of 127.0.0.1', '2002:7f00:1::'],
    ['6to4 of 169.254.169.254', '2002:a9fe:a9fe::'],
    ['6to4 of 10.0.0.1', '2002:0a00:0001::'],
    ['6to4 of a public address (refused outright)', '2002:808:808::1'],
    ['Teredo, client 127.0.0.1 (inverted in the last 32 bits)', '2001:0:4136:e378:8000:63bf:80ff:fffe'],
    ['Teredo, client 10.0.0.1', '2001:0:4136:e378:8000:63bf:f5ff:fffe'],
    ['Teredo with the public client 8.8.8.8 (refused outright)', '2001:0:4136:e378:8000:63bf:f7f7:f7f7'],
    ['IPv4-translated 127.0.0.1', '::ffff:0:7f00:1'],
    ['IPv4-translated 10.0.0.1', '::ffff:0:a00:1'],
    ['IPv4-compatible 127.0.0.1', '::7f00:1'],
    ['IPv4-compatible 8.8.8.8 (deprecated form, refused outright)', '::808:808'],
    ['IPv4-mapped 10.0.0.1', '::ffff:10.0.0.1'],
    ['NAT64 of 127.0.0.1', '64:ff9b::7f00:1'],
    ['NAT64 of 10.0.0.1', '64:ff9b::10.0.0.1'],
    ['local-use NAT64 (refused outright)', '64:ff9b:1::808:808'],
    ['local-use NAT64 of 10.0.0.1', '64:ff9b:1:a00:1::'],
    ['documentation (RFC 9637)', '3fff::1'],
    ['benchmarking', '2001:2::1'],
    ['outside 2000::/3', '4000::1'],
  ])('refuses %s: %s', (_form, address) => {
    expect(isForbiddenAddress(address)).toBe(true);
  });

  it.each([
    ['IPv4-mapped public', '::ffff:8.8.8.8'],
    ['IPv4-translated public', '::ffff:0:808:808'],
    ['NAT64 of a public address (DNS64 answers this on IPv6-only networks)', '64:ff9b::808:808'],
    ['public IPv6', '2a00:1450:4001:80b::200e'],
  ])('accepts %s: %s', (_form, address) => {
    expect(isForbiddenAddress(address)).toBe(false);
  });

  it.each([
    ['http://93.184.216.34/hook', 'must be an https:// URL'],
    ['https://127.0.0.1/hook', 'must not point at a loopback, private, link-local or metadata address'],
    ['https://[::1]:8443/hook', 'must not point at a loopback, private, link-local or metadata address'],
    [
      'https://169.254.169.254/latest/meta-data',
      'must not point at a loopback, private, link-local or metadata address',
    ],
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
    for (const host of [
      '[2002:7f00:1::]',
      '[2001:0:4136:e378:8000:63bf:80ff:fffe]',
      '[::ffff:0:7f00:1]',
      '[::7f00:1]',
      '[64:ff9b::a9fe:a9fe]',
    ]) {
      expect(strict.literalProblem(new URL(`https://${host}/x`)), host).toBe('address not allowed');
    }
  });

  it('a name whose DNS answers are IPv6 forms of private IPv4 addresses: refused at creation and by the socket lookup at delivery', async () => {
    let answers: LookupAddress[] = [];
    const dns: ResolveAll = (_host, _options, callback) => callback(null, answers);
    const guard = new UrlGuard(false, dns);
    const lookup = () =>
      new Promise<{ error: Error | null; addresses: unknown }>((resolve) =>
        guard.lookup('hooks.example.com', { all: true }, (error, addresses) => resolve({ error, addresses })),
      );
    for (const address of [
      '2002:7f00:1::',
      '2002:a9fe:a9fe::',
      '2001:0:4136:e378:8000:63bf:80ff:fffe',
      '::ffff:0:7f00:1',
      '::7f00:1',
      '64:ff9b::a00:1',
      '64:ff9b:1::a00:1',
    ]) {
      answers = [
        { address: '2a00:1450:4001:80b::200e', family: 6 },
        { address, family: 6 },
      ];
      expect(await guard.problem('https://hooks.example.com/x'), address).toBe(
        'must not point at a loopback, private, link-local or metadata address',
      );
      expect((await lookup()).error?.message, address).toBe(
        'hooks.example.com resolves to an address that is not allowed',
      );
    }
    answers = [
      { address: '2a00:1450:4001:80b::200e', family: 6 },
      { address: '64:ff9b::808:808', family: 6 },
    ];
    expect(await guard.problem('https://hooks.example.com/x')).toBeUndefined();
    expect(await lookup()).toEqual({ error: null, addresses: answers });
  });

  describe('the API', () => {
    let server: Server | undefined;
    afterAll(() => server?.close());

    it('answers 400 naming the url for a private or plain-http endpoint, IPv6 forms of private IPv4 addresses included; 201 for public IPv6', async () => {
      const { db } = await testServer();
      const org = await createOrganization();
      const { listener } = createApp({
        orm: db.orm,
        config: { ADMIN_TOKEN: undefined, PUBLIC_BASE_URL: TEST_PUBLIC_BASE_URL, API_KEY_CACHE_TTL_MS: 0 },
      });
      server = await new Promise<Server>((resolve) => {
        const s = createServer(listener).listen(0, '127.0.0.1', () => resolve(s));
      });
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const create = (url: string) =>
        fetch(`${base}/api/webhook-endpoints`, {
          method: 'POST',
          headers: { authorization: `Bearer ${org.key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ url, events: ['conversion.created'] }),
        });
      const privateAddress = 'url: must not point at a loopback, private, link-local or metadata address';
      for (const [url, message] of [
        ['https://127.0.0.1/hooks', privateAddress],
        ['http://93.184.216.34/hooks', 'url: must be an https:// URL'],
        // IPv6 forms of private IPv4 addresses: 6to4, Teredo, IPv4-translated, IPv4-compatible, NAT64.
        ['https://[2002:7f00:1::]/hooks', privateAddress],
        ['https://[2002:a9fe:a9fe::]/hooks', privateAddress],
        ['https://[2002:0a00:0001::]/hooks', privateAddress],
        ['https://[2001:0:4136:e378:8000:63bf:80ff:fffe]/hooks', privateAddress],
        ['https://[2001:0::a00:1]/hooks', privateAddress],
        ['https://[::ffff:0:7f00:1]/hooks', privateAddress],
        ['https://[::127.0.0.1]/hooks', privateAddress],
        ['https://[::ffff:169.254.169.254]/hooks', privateAddress],
        ['https://[64:ff9b::127.0.0.1]/hooks', privateAddress],
        ['https://[64:ff9b:1::a00:1]/hooks', privateAddress],
      ]) {
        const res = await create(url);
        expect(res.status, url).toBe(400);
        expect(await res.json()).toEqual({ success: false, message });
      }
      for (const url of [
        'https://[2a00:1450:4001:80b::200e]/hooks',
        'https://[2606:4700:4700::1111]:8443/hooks',
        'https://[64:ff9b::8.8.8.8]/hooks',
      ]) {
        const res = await create(url);
        expect(res.status, `${url}: ${JSON.stringify(await res.clone().json())}`).toBe(201);
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
    expect(() =>
      none.open(new SecretBox(key).seal('x', SECRET_PURPOSE.integration), SECRET_PURPOSE.integration),
    ).toThrow(/ENCRYPTION_KEY/);
    expect(() => new SecretBox('too-short')).toThrow(/32 bytes/);
  });
});
