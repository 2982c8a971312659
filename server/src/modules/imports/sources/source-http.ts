import { ImportSourceError, ImportSourceUnavailable } from '../import-model.js';
import { redact, secretsOf } from '../redact.js';

export interface SourceHttpOptions {
  /** What the source is called in messages: "Rewardful". */
  name: string;
  baseUrl: string;
  headers: Record<string, string>;
  /** Longest wait on a 429 spent inside the request; a longer Retry-After ends the attempt and the import waits it out as a delayed job. */
  maxRetryAfterMs?: number;
  /** Tries of one request through 429s, 5xx and network errors before the attempt ends (the import's own retries take over). */
  attempts?: number;
  /** How long one request may take. */
  timeoutMs?: number;
  sleep?: (ms: number) => Promise<void>;
  /** Aborted when the import is cancelled: the request in flight stops at once. */
  signal?: AbortSignal;
  /** What to check when the source refuses the credentials: "API secret" unless told. */
  credentialName?: string;
  /** Sees a successful answer's headers (Tapfiliate pages by its Link header). */
  onHeaders?: (headers: Headers) => void;
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Retry-After as seconds or an HTTP date (RFC 9110 §10.2.3); undefined when absent or unreadable. */
export function retryAfterMs(header: string | null, now = Date.now()): number | undefined {
  if (!header) return undefined;
  if (/^\d+$/.test(header.trim())) return Number(header.trim()) * 1000;
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/**
 * A header value fetch cannot send (Fetch: no NUL, CR or LF; WebIDL ByteString: nothing above
 * U+00FF). fetch would refuse it with a TypeError quoting the whole value, the credential with it.
 */
// eslint-disable-next-line no-control-regex -- NUL, CR and LF are exactly what a header value may not hold
const UNSENDABLE = /[\u0000\r\n]|[^\u0000-\u00ff]/;

/** Statuses that say "not now" rather than "never": timeouts, the rate limit, the server's own trouble. */
const transientStatus = (status: number) =>
  status === 408 || status === 425 || status === 429 || (status >= 500 && status !== 501 && status !== 505);

/** A network failure in words, from its code (never fetch's own message, which may quote the request). */
function networkProblem(err: unknown): string {
  const error = err as { name?: string; cause?: { code?: string; name?: string } };
  if (error?.name === 'TimeoutError') return 'did not answer in time';
  const code = error?.cause?.code;
  switch (code) {
    case 'ECONNREFUSED':
      return 'refused the connection';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'could not be found (DNS)';
    case 'ECONNRESET':
    case 'UND_ERR_SOCKET':
      return 'closed the connection';
    case 'ETIMEDOUT':
    case 'UND_ERR_CONNECT_TIMEOUT':
    case 'UND_ERR_HEADERS_TIMEOUT':
    case 'UND_ERR_BODY_TIMEOUT':
      return 'did not answer in time';
    default:
      return code && /^[A-Z_]+$/.test(code) ? `could not be reached (${code})` : 'could not be reached';
  }
}

/**
 * GET of a source's JSON, with the failures an import must tell apart:
 * - a credential that cannot be sent in a header (a line break pasted with it): permanent, said so;
 * - 401/403: the credential is wrong: permanent, said so;
 * - 408, 425, 429, 5xx and network errors: a few quick tries (a 429 waits its Retry-After when that
 *   is short), then ImportSourceUnavailable: the import waits as a delayed job and tries again;
 * - any other 4xx (400, 404, ...) and an answer that is not JSON: permanent, with the source's
 *   own message.
 * No message quotes a credential: they are built from our words, the status and the source's
 * error text with the credential masked (redact.ts).
 */
export async function getJson(options: SourceHttpOptions, path: string): Promise<unknown> {
  const attempts = options.attempts ?? 3;
  const sleep = options.sleep ?? defaultSleep;
  const maxWait = options.maxRetryAfterMs ?? 5_000;
  const url = options.baseUrl.replace(/\/+$/, '') + path;
  const secrets = secretsOf(options.headers);
  for (const value of Object.values(options.headers)) {
    if (UNSENDABLE.test(value)) {
      const credential = options.credentialName ?? 'API secret';
      throw new ImportSourceError(
        `The ${credential} ${/ and /.test(credential) ? 'contain' : 'contains'} characters that cannot be sent in an HTTP header (a line break, or a character outside Latin-1): copy it again from ${options.name}, without spaces or line breaks. Nothing was imported.`,
      );
    }
  }
  let lastProblem = '';
  let answered = false;
  let waitAsked: number | undefined;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    if (attempt > 1) await sleep(waitAsked ?? 500 * 2 ** (attempt - 2));
    options.signal?.throwIfAborted();
    waitAsked = undefined;
    let res: Response;
    try {
      const timeout = AbortSignal.timeout(options.timeoutMs ?? 30_000);
      res = await fetch(url, {
        headers: { accept: 'application/json', ...options.headers },
        signal: options.signal ? AbortSignal.any([options.signal, timeout]) : timeout,
      });
    } catch (err) {
      options.signal?.throwIfAborted();
      // A TypeError without a cause is fetch refusing the request itself (not the network): no try will fix it.
      if (err instanceof TypeError && !(err as { cause?: unknown }).cause)
        throw new ImportSourceError(
          `${options.name}: the request could not be sent (check the credentials for unusual characters). Nothing was imported.`,
        );
      lastProblem = `${options.name} ${networkProblem(err)}`;
      answered = false;
      continue;
    }
    answered = true;
    if (res.ok) {
      options.onHeaders?.(res.headers);
      try {
        return await res.json();
      } catch {
        options.signal?.throwIfAborted();
        throw new ImportSourceError(`${options.name} answered ${path} with something that is not JSON`);
      }
    }
    const text = await res.text().catch(() => '');
    if (res.status === 401 || res.status === 403) {
      throw new ImportSourceError(
        `${options.name} refused the credentials (HTTP ${res.status}): check the ${options.credentialName ?? 'API secret'}. Nothing was imported.`,
      );
    }
    if (transientStatus(res.status)) {
      const asked = retryAfterMs(res.headers.get('retry-after'));
      lastProblem =
        res.status === 429
          ? `${options.name} answered 429 (its rate limit)`
          : `${options.name} answered HTTP ${res.status}`;
      // A long wait is not spent holding a worker: the import becomes a job delayed by that much.
      if (asked !== undefined && asked > maxWait) throw new ImportSourceUnavailable(lastProblem, asked);
      waitAsked = asked;
      if (attempt === attempts) throw new ImportSourceUnavailable(lastProblem, asked);
      continue;
    }
    throw new ImportSourceError(
      `${options.name} refused ${path} (HTTP ${res.status}): ${redact(errorText(text), secrets)}`,
    );
  }
  throw new ImportSourceUnavailable(lastProblem, undefined, !answered);
}

function errorText(body: string): string {
  try {
    const parsed = JSON.parse(body) as { error?: unknown; message?: unknown };
    const message = parsed.error ?? parsed.message;
    if (typeof message === 'string') return message.slice(0, 300);
  } catch {
    // not JSON
  }
  return body.slice(0, 300);
}
