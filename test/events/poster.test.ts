import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebhookPoster } from '../../server/src/modules/events/poster.js';
import { UrlGuard } from '../../server/src/modules/events/url-guard.js';

/** One attempt's POST: the SSRF guard on the socket that connects, no redirect followed, the answer kept. */
describe('WebhookPoster', () => {
  let server: Server;
  let port = 0;
  const relaxed = new WebhookPoster(new UrlGuard(true), 1_000, 4);
  const strict = new WebhookPoster(new UrlGuard(false), 1_000, 4);

  beforeAll(async () => {
    server = createServer((req, res) => {
      req.resume();
      if (req.url === '/moved') res.writeHead(302, { location: `http://127.0.0.1:${port}/ok` }).end('moved');
      else res.writeHead(200).end(`got ${String(req.headers['webhook-id'])}`);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await relaxed.close();
    await strict.close();
    server.close();
  });

  it('posts with the signed headers and keeps the answer', async () => {
    expect(await relaxed.post(`http://127.0.0.1:${port}/ok`, { 'webhook-id': 'msg_1' }, '{}')).toEqual({
      status: 200,
      body: 'got msg_1',
    });
  });

  it('follows no redirect: a 302 is the answer (a failure, retried)', async () => {
    expect(await relaxed.post(`http://127.0.0.1:${port}/moved`, {}, '{}')).toEqual({ status: 302, body: 'moved' });
  });

  it('refuses a name that resolves to a private address on the socket that connects, and a private literal before connecting', async () => {
    const byName = await strict.post(`https://localhost:${port}/ok`, {}, '{}');
    expect(byName.error).toMatch(/^Address not allowed: localhost resolves to an address that is not allowed/);
    expect(await strict.post(`https://10.0.0.1:${port}/ok`, {}, '{}')).toEqual({
      error: 'Address not allowed: address not allowed',
    });
  });
});
