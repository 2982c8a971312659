import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  /** Verified with the receiver's secret (standardwebhooks): true, or the verification error. */
  verified: true | string;
  at: number;
}

/**
 * A real local HTTP receiver (127.0.0.1) that verifies every request with the `standardwebhooks`
 * package, as a merchant's would, and answers what `answer` says (a status, or 'hang').
 */
export class Receiver {
  readonly received: Received[] = [];
  secret: string | undefined;
  answer: (request: Received, index: number) => number | 'hang' = () => 200;
  /** The body of every answer; default a short text. */
  responseBody: string | undefined;
  private server: Server | undefined;
  private readonly hanging = new Set<() => void>();
  url = '';

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        let verified: true | string = 'no secret';
        if (this.secret) {
          try {
            new Webhook(this.secret).verify(body, req.headers as Record<string, string>);
            verified = true;
          } catch (err) {
            verified = (err as Error).message;
          }
        }
        const entry: Received = { headers: req.headers, body, verified, at: Date.now() };
        this.received.push(entry);
        const answer = this.answer(entry, this.received.length - 1);
        if (answer === 'hang') {
          const release = () => res.destroy();
          this.hanging.add(release);
          res.on('close', () => this.hanging.delete(release));
          return;
        }
        res
          .writeHead(answer, { 'content-type': 'text/plain' })
          .end(this.responseBody ?? (verified === true ? `ok ${answer}` : `rejected: ${verified}`));
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks`;
    return this;
  }

  events(): any[] {
    return this.received.map((r) => JSON.parse(r.body));
  }

  async stop(): Promise<void> {
    for (const release of this.hanging) release();
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

export async function until<T>(
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs: number,
  what: string,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
