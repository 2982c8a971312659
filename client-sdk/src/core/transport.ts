import { APIError, ConnectionError, TimeoutError, UserAbortError, parseRetryAfterMs } from '../errors.js';
import { VERSION } from '../version.js';
import type { APIResponse } from './api-promise.js';

/** The subset of the Fetch API the SDK uses; `globalThis.fetch` and undici's fetch fit it. */
export type Fetch = (url: string, init: FetchInit) => Promise<Response>;

export interface FetchInit {
  method: string;
  headers: Record<string, string>;
  body?: string;
  signal: AbortSignal;
}

/** Options accepted by every method as its last argument; they override the client's. */
export interface RequestOptions {
  /** Milliseconds to wait for each attempt (connect, response and body); default the client's. */
  timeoutMs?: number;
  /** Retries after the first attempt; default the client's. 0 disables retries. */
  maxRetries?: number;
  /** Aborts the request (and any pending retry); rejects with UserAbortError. */
  signal?: AbortSignal;
  /** Extra headers sent with the request. */
  headers?: Record<string, string>;
  /** The `X-Request-Id` to send (letters, digits and `._:-`, at most 128); default a new UUID. */
  requestId?: string;
}

export interface TransportConfig {
  apiKey: string;
  baseUrl: string;
  timeoutMs: number;
  maxRetries: number;
  fetch: Fetch;
  headers: Record<string, string>;
}

export interface HttpRequest {
  method: string;
  /** Path with its parameters already encoded, e.g. `/api/customers/cus_123`. */
  path: string;
  query?: Record<string, unknown>;
  body?: unknown;
  /**
   * Whether repeating the request cannot create a second record. Requests that are not are
   * retried only when the service certainly did not process them (429, 500, 503, refused
   * connection), never after a timeout or a gateway error.
   */
  idempotent: boolean;
}

const INITIAL_RETRY_DELAY_MS = 500;
const MAX_RETRY_DELAY_MS = 8_000;
/** A `Retry-After` longer than this is not waited for: the error is thrown instead. */
const MAX_RETRY_AFTER_MS = 60_000;

/** Connection failures that happen before the request is sent: safe to retry any request. */
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ENETUNREACH', 'EHOSTUNREACH']);

/** Backoff before retry number `retry` (0-based): exponential, capped, with jitter. */
export function retryDelayMs(retry: number, random: () => number = Math.random): number {
  const ceiling = Math.min(INITIAL_RETRY_DELAY_MS * 2 ** retry, MAX_RETRY_DELAY_MS);
  // Up to 25 % less than the ceiling, so that clients failing together do not retry together.
  return ceiling * (1 - random() * 0.25);
}

function userAgent(): string {
  const node = typeof process !== 'undefined' && process.versions?.node ? ` node/${process.versions.node}` : '';
  return `affiliate-attribution-sdk-node/${VERSION}${node}`;
}

export function buildUrl(baseUrl: string, path: string, query?: Record<string, unknown>): string {
  let url = baseUrl + path;
  if (query) {
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(query)) {
      if (value === undefined || value === null) continue;
      for (const item of Array.isArray(value) ? value : [value]) {
        params.append(key, item instanceof Date ? item.toISOString() : String(item));
      }
    }
    const search = params.toString();
    if (search) url += `?${search}`;
  }
  return url;
}

/** Header names are case-insensitive: one spelling, so that a caller's `Authorization` cannot sit beside ours. */
function lowerCaseKeys(headers: Record<string, string> | undefined): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers ?? {})) result[name.toLowerCase()] = value;
  return result;
}

function errorCode(err: unknown): string | undefined {
  for (
    let e: unknown = err, depth = 0;
    e && typeof e === 'object' && depth < 5;
    e = (e as { cause?: unknown }).cause, depth++
  ) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return undefined;
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- settles as fetch does on abort: with the signal's own reason
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- settles as fetch does on abort: with the signal's own reason
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function parseJson(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function errorMessage(status: number, statusText: string, body: unknown): string {
  if (body && typeof body === 'object' && typeof (body as { message?: unknown }).message === 'string') {
    return (body as { message: string }).message;
  }
  const text = typeof body === 'string' && body.trim() !== '' ? `: ${body.trim().slice(0, 200)}` : '';
  return `HTTP ${status}${statusText ? ` ${statusText}` : ''}${text}`;
}

type Attempt =
  | { kind: 'response'; status: number; statusText: string; headers: Headers; body: unknown }
  | { kind: 'error'; error: ConnectionError; sent: boolean };

/** A JSON answer of the API: the resource under `data`, and `deduped` on creations. */
export interface Envelope {
  data?: Record<string, unknown>;
  deduped?: unknown;
}

export class Transport {
  constructor(private readonly config: TransportConfig) {}

  async request<T>(
    req: HttpRequest,
    options: RequestOptions = {},
    unwrap: (body: Envelope) => T,
  ): Promise<APIResponse<T>> {
    const maxRetries = options.maxRetries ?? this.config.maxRetries;
    const timeoutMs = options.timeoutMs ?? this.config.timeoutMs;
    const requestId = options.requestId ?? globalThis.crypto.randomUUID();
    const url = buildUrl(this.config.baseUrl, req.path, req.query);
    const headers: Record<string, string> = {
      accept: 'application/json',
      'user-agent': userAgent(),
      ...lowerCaseKeys(this.config.headers),
      ...lowerCaseKeys(options.headers),
      authorization: `Bearer ${this.config.apiKey}`,
      'x-request-id': requestId,
    };
    let body: string | undefined;
    if (req.body !== undefined) {
      body = JSON.stringify(req.body);
      headers['content-type'] = 'application/json';
    }

    for (let retry = 0; ; retry++) {
      if (options.signal?.aborted) throw new UserAbortError({ requestId, cause: options.signal.reason });
      const attempt = await this.attempt(
        url,
        { method: req.method, headers, body },
        timeoutMs,
        options.signal,
        requestId,
      );
      const canRetry = retry < maxRetries;

      if (attempt.kind === 'error') {
        if (canRetry && (req.idempotent || !attempt.sent)) {
          await this.wait(retryDelayMs(retry), options.signal, requestId);
          continue;
        }
        throw attempt.error;
      }

      const responseRequestId = attempt.headers.get('x-request-id') ?? requestId;
      if (attempt.status >= 200 && attempt.status < 300) {
        const envelope = attempt.body;
        if (!envelope || typeof envelope !== 'object') {
          throw new APIError({
            status: attempt.status,
            message: `Unexpected response body (expected JSON): ${String(envelope).slice(0, 200)}`,
            requestId: responseRequestId,
            headers: attempt.headers,
            body: envelope,
          });
        }
        return {
          data: unwrap(envelope),
          status: attempt.status,
          requestId: responseRequestId,
          headers: attempt.headers,
        };
      }

      const error = APIError.from({
        status: attempt.status,
        message: errorMessage(attempt.status, attempt.statusText, attempt.body),
        requestId: responseRequestId,
        headers: attempt.headers,
        body: attempt.body,
      });
      const retryable = req.idempotent
        ? attempt.status === 408 || attempt.status === 429 || attempt.status >= 500
        : attempt.status === 429 || attempt.status === 500 || attempt.status === 503;
      if (canRetry && retryable) {
        const retryAfterMs = parseRetryAfterMs(attempt.headers);
        if (retryAfterMs !== undefined && retryAfterMs > MAX_RETRY_AFTER_MS) throw error;
        await this.wait(retryAfterMs ?? retryDelayMs(retry), options.signal, requestId);
        continue;
      }
      throw error;
    }
  }

  private async wait(ms: number, signal: AbortSignal | undefined, requestId: string): Promise<void> {
    try {
      await sleep(ms, signal);
    } catch (reason) {
      throw new UserAbortError({ requestId, cause: reason });
    }
  }

  /** One HTTP exchange, body included, bounded by timeoutMs. */
  private async attempt(
    url: string,
    init: { method: string; headers: Record<string, string>; body?: string },
    timeoutMs: number,
    signal: AbortSignal | undefined,
    requestId: string,
  ): Promise<Attempt> {
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    const onAbort = () => controller.abort(signal!.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    let sent = false;
    try {
      const response = await this.config.fetch(url, { ...init, signal: controller.signal });
      sent = true;
      const text = await response.text();
      return {
        kind: 'response',
        status: response.status,
        statusText: response.statusText,
        headers: response.headers,
        body: parseJson(text),
      };
    } catch (err) {
      if (signal?.aborted) throw new UserAbortError({ requestId, cause: signal.reason });
      if (timedOut) {
        return {
          kind: 'error',
          sent: true,
          error: new TimeoutError(`Request timed out after ${timeoutMs} ms`, { requestId, cause: err }),
        };
      }
      const code = errorCode(err);
      const notSent = !sent && code !== undefined && NOT_SENT_CODES.has(code);
      const detail = code ?? (err instanceof Error ? err.message : String(err));
      return {
        kind: 'error',
        sent: !notSent,
        error: new ConnectionError(`Connection error (${detail}) on ${init.method} ${url}`, { requestId, cause: err }),
      };
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    }
  }
}
