import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { TEST_ADMIN_TOKEN, testServer } from '../support/server.js';
import { createOrganization } from '../support/api.js';

/**
 * Credentials and a declared length are checked from the headers, before any byte of the body is
 * read: a refused request costs the service no buffering, whatever the body it announces. Each
 * case sends the head of a request announcing a large body and only its first bytes, then waits:
 * the answer must come without the rest, and the server must close the connection (kept alive,
 * Node would wait for the rest of the body, which never comes).
 */
interface HeadAnswer {
  status: number;
  headers: Record<string, string>;
  body: { success: boolean; message: string };
  /** The server ended the connection after answering (rather than waiting for the body). */
  closedByServer: boolean;
}

/** Gives up after this long: long enough for a loaded CI machine, far below the server's own timeouts (60 s). */
const PATIENCE_MS = 8_000;

async function sendHead(
  method: string,
  path: string,
  headers: Record<string, string | number>,
  firstBodyBytes: string,
): Promise<HeadAnswer> {
  const { port } = new URL((await testServer()).baseUrl);
  const head = [
    `${method} ${path} HTTP/1.1`,
    'Host: 127.0.0.1',
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
    '',
    '',
  ].join('\r\n');
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1', () => socket.write(head + firstBodyBytes));
    let received = Buffer.alloc(0);
    let answer: Omit<HeadAnswer, 'closedByServer'> | undefined;
    const timer = setTimeout(() => {
      socket.destroy();
      reject(
        new Error(
          answer
            ? `answered ${answer.status} but the connection was left open`
            : 'no answer: the server is waiting for the body',
        ),
      );
    }, PATIENCE_MS);
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      answer ??= parseAnswer(received);
    });
    socket.on('error', reject);
    socket.on('end', () => {
      clearTimeout(timer);
      answer ??= parseAnswer(received);
      if (answer) resolve({ ...answer, closedByServer: true });
      else
        reject(
          new Error(`connection closed without a complete answer: ${JSON.stringify(received.toString('latin1'))}`),
        );
    });
  });
}

/** A complete HTTP/1.1 answer with a Content-Length body, or undefined while more is to come. */
function parseAnswer(bytes: Buffer): Omit<HeadAnswer, 'closedByServer'> | undefined {
  const split = bytes.indexOf('\r\n\r\n');
  if (split < 0) return undefined;
  const [statusLine, ...lines] = bytes.subarray(0, split).toString('latin1').split('\r\n');
  const headers = Object.fromEntries(
    lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
  );
  const body = bytes.subarray(split + 4);
  if (body.length < Number(headers['content-length'])) return undefined;
  return { status: Number(statusLine.split(' ')[1]), headers, body: JSON.parse(body.toString('utf8')) };
}

const ORGANIZATION_ID = '00000000-0000-4000-8000-000000000000';

describe('the body is read only after the credentials and the declared length pass', () => {
  it('no key or an unknown key, on the hot lane and on Express: 401 without reading the announced body, connection closed', async () => {
    const cases: [string, Record<string, string>][] = [
      ['/api/clicks', {}], // hot lane, no key
      ['/api/conversions', { authorization: 'Bearer svc-not-a-key' }], // hot lane, a key looked up and not found
      ['/api/programs', {}], // Express
      ['/api/programs', { authorization: 'Bearer svc-not-a-key' }],
    ];
    for (const [path, auth] of cases) {
      const answer = await sendHead(
        'POST',
        path,
        { ...auth, 'content-type': 'application/json', 'content-length': 900_000 },
        '{"ref":"a',
      );
      expect({ path, status: answer.status, body: answer.body }).toEqual({
        path,
        status: 401,
        body: { success: false, message: 'Missing or invalid API key' },
      });
      expect(answer.headers.connection, path).toBe('close');
      expect(answer.closedByServer, path).toBe(true);
    }
  });

  it('a wrong admin token: 401 without reading the body', async () => {
    const answer = await sendHead(
      'POST',
      '/admin/organizations',
      { authorization: 'Bearer wrong', 'content-type': 'application/json', 'content-length': 900_000 },
      '{"name":"',
    );
    expect([answer.status, answer.body.message, answer.headers.connection]).toEqual([
      401,
      'Missing or invalid admin token',
      'close',
    ]);
  });

  it('a declared Content-Length over the limit, with valid credentials: 413 before a byte is read', async () => {
    const org = await createOrganization();
    const tooLarge = 1024 * 1024 + 1;
    for (const [path, auth] of [
      ['/api/clicks', `Bearer ${org.key}`], // left by the hot lane to Express
      ['/api/programs', `Bearer ${org.key}`],
      ['/admin/organizations', `Bearer ${TEST_ADMIN_TOKEN}`],
    ]) {
      const answer = await sendHead(
        'POST',
        path,
        { authorization: auth, 'content-type': 'application/json', 'content-length': tooLarge },
        '{"',
      );
      expect([path, answer.status, answer.body.message, answer.headers.connection]).toEqual([
        path,
        413,
        'Request body exceeds the 1 MiB limit',
        'close',
      ]);
    }
  });

  it('the public endpoints: a declared length over their 16 KiB, 413 before a byte is read', async () => {
    const answer = await sendHead(
      'POST',
      `/public/organizations/${ORGANIZATION_ID}/clicks`,
      { 'content-type': 'text/plain', 'content-length': 900_000 },
      '{"ref":"',
    );
    expect([answer.status, answer.body.message, answer.headers.connection]).toEqual([
      413,
      'Request body exceeds the 16 KiB limit',
      'close',
    ]);
  });

  // Refused small bodies are drained rather than closed on (error-handler.ts, mustCloseForUnreadBody).
  it('a refused request with a small body keeps its connection', async () => {
    const body = '{"ref":"x"}';
    const { port } = new URL((await testServer()).baseUrl);
    const headers = await new Promise<Record<string, unknown>>((resolve, reject) => {
      const req = httpRequest(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/api/clicks',
          headers: { 'content-type': 'application/json', 'content-length': body.length },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode, connection: res.headers.connection }));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
    expect(headers).toEqual({ status: 401, connection: 'keep-alive' });
  });

  it('unauthenticated ~1 MB bodies are refused without being buffered (RSS logged, not asserted)', async () => {
    const { port } = new URL((await testServer()).baseUrl);
    const payload = Buffer.alloc(1_000_000, 0x20);
    const count = 100;
    const rssBefore = process.memoryUsage().rss;
    const statuses = await Promise.all(
      Array.from(
        { length: count },
        () =>
          new Promise<number>((resolve, reject) => {
            let answered = false;
            const req = httpRequest(
              {
                host: '127.0.0.1',
                port,
                method: 'POST',
                path: '/api/conversions',
                headers: { 'content-type': 'application/json', 'content-length': payload.length },
              },
              (res) => {
                answered = true;
                res.resume();
                res.on('end', () => resolve(res.statusCode ?? 0));
              },
            );
            // The server closes the connection while the client still writes the body: once the
            // answer has arrived, a write error is expected; before it, it is a failure.
            req.on('error', (err) => (answered ? undefined : reject(err)));
            req.end(payload);
          }),
      ),
    );
    const rssAfter = process.memoryUsage().rss;
    console.log(
      `${count} unauthenticated 1 MB bodies: RSS ${(rssBefore / 2 ** 20).toFixed(0)} MiB -> ${(rssAfter / 2 ** 20).toFixed(0)} MiB (test process, client and server)`,
    );
    expect(statuses).toEqual(Array(count).fill(401));
  });
});
