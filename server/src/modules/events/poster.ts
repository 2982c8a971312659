import { Agent } from 'undici';
import { DELIVERY_DEFAULTS } from './delivery-settings.js';
import { UrlGuard, UrlRefusedError } from './url-guard.js';

/** What one attempt got: an answer (status, the first 1 KB of its body) or why there was none. */
export interface Outcome {
  status?: number;
  body?: string;
  error?: string;
}

export const isSuccess = (outcome: Outcome): boolean =>
  outcome.status !== undefined && outcome.status >= 200 && outcome.status < 300;

/**
 * The POSTs of delivery attempts, with undici (a keep-alive connection pool per origin, far less
 * work per request than node:http's client): no redirect followed (undici follows none unless
 * asked), cut at the timeout (connecting included), the answer's body kept up to 1 KB, every
 * address checked by the SSRF guard (UrlGuard) on the socket that connects. A busy endpoint gets
 * its events over at most `socketsPerOrigin` reused connections, so an attempt costs a request,
 * not a handshake.
 */
export class WebhookPoster {
  private readonly agent: Agent;

  constructor(
    private readonly urls: UrlGuard,
    private readonly timeoutMs: number,
    socketsPerOrigin: number,
  ) {
    this.agent = new Agent({
      connections: socketsPerOrigin,
      keepAliveTimeout: 30_000,
      connect: { lookup: urls.lookup, timeout: timeoutMs },
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
  }

  async post(url: string, signed: Record<string, string>, body: string): Promise<Outcome> {
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      return { error: 'Invalid url' };
    }
    const refused = this.urls.literalProblem(target);
    if (refused) return { error: `Address not allowed: ${refused}` };
    const timeout = AbortSignal.timeout(this.timeoutMs);
    try {
      const response = await this.agent.request({
        origin: target.origin,
        path: target.pathname + target.search,
        method: 'POST',
        headers: { 'content-type': 'application/json', 'user-agent': 'affiliate-attribution-webhooks/1', ...signed },
        body,
        signal: timeout,
      });
      const chunks: Buffer[] = [];
      let size = 0;
      try {
        for await (const chunk of response.body as AsyncIterable<Buffer>) {
          chunks.push(chunk);
          size += chunk.length;
          if (size >= DELIVERY_DEFAULTS.responseBodyBytes) break;
        }
      } catch {
        // The answer's status is what counts; a body cut short keeps what arrived.
      } finally {
        if (size >= DELIVERY_DEFAULTS.responseBodyBytes) response.body.destroy();
      }
      const text = Buffer.concat(chunks)
        .subarray(0, DELIVERY_DEFAULTS.responseBodyBytes)
        .toString('utf8')
        .replaceAll('\0', '');
      return { status: response.statusCode, body: text };
    } catch (err) {
      if (timeout.aborted) return { error: `Timed out after ${this.timeoutMs / 1000} s` };
      const refusedBy = causeOf(err, UrlRefusedError);
      return { error: refusedBy ? `Address not allowed: ${refusedBy.message}` : `Connection failed: ${describe(err)}` };
    }
  }

  close(): Promise<void> {
    return this.agent.destroy();
  }
}

function causeOf<E extends Error>(err: unknown, type: new (...args: never[]) => E): E | undefined {
  for (let e = err; e instanceof Error; e = e.cause) if (e instanceof type) return e;
  return undefined;
}

function describe(err: unknown): string {
  const e = err as { code?: string; message?: string; cause?: { code?: string } };
  return e.cause?.code ?? e.code ?? e.message ?? String(err);
}
