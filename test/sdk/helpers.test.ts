import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { ATTRIBUTION_COOKIE, Client, VERSION, getCookieId } from '../../client-sdk/src/index.js';

describe('getCookieId: the svc_aff cookie of an incoming request', () => {
  const header = 'theme=dark; svc_aff=ck_3kT9x; other=1';

  it('reads a raw Cookie header, a Fetch Request and a Headers object', () => {
    expect(ATTRIBUTION_COOKIE).toBe('svc_aff');
    expect(getCookieId(header)).toBe('ck_3kT9x');
    expect(getCookieId(new Request('https://shop.example.com/signup', { headers: { cookie: header } }))).toBe(
      'ck_3kT9x',
    );
    expect(getCookieId(new Headers({ Cookie: header }))).toBe('ck_3kT9x');
  });

  it('decodes, unquotes, and never confuses a cookie whose name merely ends with svc_aff', () => {
    expect(getCookieId('x_svc_aff=wrong; svc_aff=%22quoted%22')).toBe('"quoted"');
    expect(getCookieId('svc_aff="acme-partner"')).toBe('acme-partner');
    expect(getCookieId('svc_aff=bad%E0%A4%A')).toBe('bad%E0%A4%A');
    expect(getCookieId('xsvc_aff=1')).toBeUndefined();
  });

  it('undefined when there is no such cookie, or no cookies at all', () => {
    expect(getCookieId('a=1; b=2')).toBeUndefined();
    expect(getCookieId('svc_aff=')).toBeUndefined();
    expect(getCookieId('')).toBeUndefined();
    expect(getCookieId(undefined)).toBeUndefined();
    expect(getCookieId(null)).toBeUndefined();
    expect(getCookieId(new Request('https://shop.example.com/'))).toBeUndefined();
    expect(getCookieId({ headers: {} })).toBeUndefined();
  });

  it('prefers cookies an Express cookie-parser already parsed, and joins HTTP/2 style arrays', () => {
    expect(getCookieId({ headers: { cookie: 'svc_aff=from-header' }, cookies: { svc_aff: 'from-parser' } })).toBe(
      'from-parser',
    );
    expect(getCookieId({ headers: { cookie: ['a=1', 'svc_aff=ck_arr'] } })).toBe('ck_arr');
  });

  describe('on real servers', () => {
    const closers: Array<() => Promise<void>> = [];
    afterEach(async () => {
      while (closers.length) await closers.pop()!();
    });

    async function listen(server: ReturnType<typeof createServer>): Promise<string> {
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      closers.push(() => new Promise((resolve) => server.close(() => resolve())));
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    }

    it('a Node IncomingMessage', async () => {
      const server = createServer((req: IncomingMessage, res) => res.end(String(getCookieId(req))));
      const url = await listen(server);
      const res = await fetch(url, { headers: { cookie: 'session=abc; svc_aff=ck_node' } });
      expect(await res.text()).toBe('ck_node');
    });

    it('an Express request', async () => {
      const app = express();
      app.get('/signup', (req, res) => {
        res.send(String(getCookieId(req)));
      });
      const url = await listen(createServer(app));
      const res = await fetch(`${url}/signup`, { headers: { cookie: 'svc_aff=acme-partner' } });
      expect(await res.text()).toBe('acme-partner');
      const none = await fetch(`${url}/signup`);
      expect(await none.text()).toBe('undefined');
    });
  });
});

describe('new Client(options)', () => {
  const g = globalThis as Record<string, unknown>;
  afterEach(() => {
    delete g.window;
  });

  it('refuses to run in a browser, where the API key would leak', () => {
    g.window = { document: {} };
    expect(() => new Client({ apiKey: 'svc-abc', baseUrl: 'https://x.example' })).toThrow(/server-side secret/);
    delete g.window;
    expect(() => new Client({ apiKey: 'svc-abc', baseUrl: 'https://x.example' })).not.toThrow();
  });

  it('validates its options with clear messages', () => {
    expect(() => new Client({ apiKey: '', baseUrl: 'https://x.example' })).toThrow(/apiKey is required/);
    expect(() => new Client({ baseUrl: 'https://x.example' } as never)).toThrow(/apiKey is required/);
    expect(() => new Client({ apiKey: 'svc-a' } as never)).toThrow(/baseUrl is required/);
    expect(() => new Client({ apiKey: 'svc-a', baseUrl: 'localhost:3000' })).toThrow(/http:\/\/ or https:\/\//);
    expect(() => new Client({ apiKey: 'svc-a', baseUrl: 'not a url' })).toThrow(/not an absolute URL/);
    expect(() => new Client({ apiKey: 'svc-a', baseUrl: 'https://x.example', timeoutMs: 0 })).toThrow(/timeoutMs/);
    expect(() => new Client({ apiKey: 'svc-a', baseUrl: 'https://x.example', maxRetries: -1 })).toThrow(/maxRetries/);
    expect(() => new Client({ apiKey: 'svc-a', baseUrl: 'https://x.example', maxRetries: 1.5 })).toThrow(/maxRetries/);
  });

  it('VERSION (sent in the User-Agent) is the package version', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../client-sdk/package.json', import.meta.url), 'utf8'));
    expect(VERSION).toBe(pkg.version);
  });
});
