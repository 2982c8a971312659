import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ImportSourceError, ImportSourceUnavailable } from '../../server/src/modules/imports/import-model.js';
import { redact, secretsOf } from '../../server/src/modules/imports/redact.js';
import { getJson, type SourceHttpOptions } from '../../server/src/modules/imports/sources/source-http.js';

/**
 * How a source's answer is classified (source-http.ts): what waiting cannot heal fails at once
 * (one request, no retry), what it can ends the try as ImportSourceUnavailable after a few quick
 * tries (a long Retry-After at once, carried to the import's next try); no message quotes the key.
 * A local server answers each path as the test says.
 */
const KEY = 'sk_live_SECRET0123456789';
type Answer = { status: number; body?: string; headers?: Record<string, string> };
const answers = new Map<string, Answer>();
const hits = new Map<string, number>();
let server: Server;
let base: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    const path = req.url ?? '/';
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const a = answers.get(path) ?? { status: 200, body: '{"ok":true}' };
    res.writeHead(a.status, { 'content-type': 'application/json', ...a.headers });
    res.end(a.body ?? '{}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const slept: number[] = [];
const options = (headers: Record<string, string> = { authorization: `Bearer ${KEY}` }): SourceHttpOptions => ({
  name: 'Acme',
  baseUrl: base,
  headers,
  credentialName: 'API key',
  sleep: async (ms) => void slept.push(ms),
});

async function failure(
  path: string,
  answer: Answer,
  headers?: Record<string, string>,
): Promise<{ error: Error; hits: number }> {
  answers.set(path, answer);
  const error = await getJson(options(headers), path).then(
    () => new Error('answered'),
    (err: Error) => err,
  );
  return { error, hits: hits.get(path) ?? 0 };
}

describe('a source request', () => {
  it.each([
    [400, 'Acme refused /p400 (HTTP 400): bad filter'],
    [404, 'Acme refused /p404 (HTTP 404): bad filter'],
    [401, 'Acme refused the credentials (HTTP 401): check the API key. Nothing was imported.'],
    [403, 'Acme refused the credentials (HTTP 403): check the API key. Nothing was imported.'],
  ])('HTTP %i fails at once, one request, no retry', async (status, message) => {
    const { error, hits } = await failure(`/p${status}`, { status, body: '{"error":"bad filter"}' });
    expect(error).toBeInstanceOf(ImportSourceError);
    expect(error.message).toBe(message);
    expect(hits).toBe(1);
  });

  it('an answer that is not JSON fails at once', async () => {
    const { error, hits } = await failure('/html', { status: 200, body: '<html>' });
    expect(error).toBeInstanceOf(ImportSourceError);
    expect(error.message).toBe('Acme answered /html with something that is not JSON');
    expect(hits).toBe(1);
  });

  it('a credential with a line break or a character outside Latin-1 is refused before any request, and quoted nowhere', async () => {
    for (const key of [`${KEY}\n`, `${KEY}\r\nX-Evil: 1`, `${KEY}\u2028`]) {
      const { error, hits } = await failure('/never', { status: 200 }, { authorization: `Bearer ${key}` });
      expect(error).toBeInstanceOf(ImportSourceError);
      expect(error.message).toBe(
        'The API key contains characters that cannot be sent in an HTTP header (a line break, or a character outside Latin-1): copy it again from Acme, without spaces or line breaks. Nothing was imported.',
      );
      expect(hits).toBe(0);
    }
  });

  it("a source's error text that echoes the key is shown with the key masked", async () => {
    const { error } = await failure('/echo', {
      status: 422,
      body: JSON.stringify({ error: `key ${KEY} is not allowed here` }),
    });
    expect(error.message).toBe('Acme refused /echo (HTTP 422): key [redacted] is not allowed here');
  });

  it('HTTP 500 is tried 3 times with a growing pause, then ends the try as unavailable', async () => {
    slept.length = 0;
    const { error, hits } = await failure('/p500', { status: 500 });
    expect(error).toBeInstanceOf(ImportSourceUnavailable);
    expect(error.message).toBe('Acme answered HTTP 500');
    expect(hits).toBe(3);
    expect(slept).toEqual([500, 1000]);
  });

  it('a 429 waits a short Retry-After in place; a long one ends the try at once, carrying the wait', async () => {
    slept.length = 0;
    const short = await failure('/p429', { status: 429, headers: { 'retry-after': '2' } });
    expect(short.hits).toBe(3);
    expect(slept).toEqual([2000, 2000]);
    expect((short.error as ImportSourceUnavailable).retryAfterMs).toBe(2000);
    const long = await failure('/p429-long', { status: 429, headers: { 'retry-after': '600' } });
    expect(long.hits).toBe(1);
    expect(long.error).toBeInstanceOf(ImportSourceUnavailable);
    expect(long.error.message).toBe('Acme answered 429 (its rate limit)');
    expect((long.error as ImportSourceUnavailable).retryAfterMs).toBe(600_000);
  });

  it('a source that cannot be reached is unavailable, said in words of our own', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const error = await getJson({ ...options(), baseUrl: `http://127.0.0.1:${port}` }, '/x').catch((err: Error) => err);
    expect(error).toBeInstanceOf(ImportSourceUnavailable);
    expect((error as Error).message).toBe('Acme refused the connection');
  });
});

describe('redaction', () => {
  it('masks every form a credential takes in a message: whole, by line, JSON-escaped, Basic-encoded', () => {
    const secrets = secretsOf({ api_key: 'abcd1234\nefgh5678', program_id: 'prg_visible' });
    const basic = Buffer.from('abcd1234\nefgh5678:').toString('base64');
    expect(
      redact(`a abcd1234\nefgh5678 b abcd1234 c efgh5678 d "abcd1234\\nefgh5678" e ${basic} f prg_visible`, secrets),
    ).toBe('a [redacted] b [redacted] c [redacted] d "[redacted]" e [redacted] f prg_visible');
  });
});
