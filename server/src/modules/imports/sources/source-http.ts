import { ImportSourceError } from '../import-model.js';

export interface SourceHttpOptions {
  /** What the source is called in messages: "Rewardful". */
  name: string;
  baseUrl: string;
  headers: Record<string, string>;
  /** Longest single wait on a 429 (the source's Retry-After above it is cut to it). */
  maxRetryAfterMs?: number;
  /** Attempts for one request through 429s and 5xx before the import gives up. */
  attempts?: number;
  sleep?: (ms: number) => Promise<void>;
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
 * GET of a source's JSON, with the failures an import must tell apart:
 * - 401/403: the credential is wrong: a permanent ImportSourceError that says so;
 * - 429: the source's rate limit: wait its Retry-After (else a growing pause) and try again;
 * - 5xx and network errors: a few tries with a growing pause, then a plain Error (the job's own
 *   retry resumes the import from its last finished page);
 * - any other 4xx: permanent, with the source's own message.
 */
export async function getJson(options: SourceHttpOptions, path: string): Promise<unknown> {
  const attempts = options.attempts ?? 8;
  const sleep = options.sleep ?? defaultSleep;
  const maxWait = options.maxRetryAfterMs ?? 120_000;
  const url = options.baseUrl.replace(/\/+$/, '') + path;
  let lastProblem = '';
  for (let attempt = 1; attempt <= attempts; attempt++) {
    let res: Response;
    try {
      res = await fetch(url, { headers: { accept: 'application/json', ...options.headers }, signal: AbortSignal.timeout(30_000) });
    } catch (err) {
      lastProblem = `${options.name} could not be reached (${(err as Error).message})`;
      await sleep(Math.min(maxWait, 500 * 2 ** (attempt - 1)));
      continue;
    }
    if (res.ok) {
      options.onHeaders?.(res.headers);
      try {
        return await res.json();
      } catch {
        throw new ImportSourceError(`${options.name} answered ${path} with something that is not JSON`);
      }
    }
    const text = await res.text().catch(() => '');
    if (res.status === 401 || res.status === 403) {
      throw new ImportSourceError(`${options.name} refused the credentials (HTTP ${res.status}): check the ${options.credentialName ?? 'API secret'}. Nothing was imported.`);
    }
    if (res.status === 429) {
      lastProblem = `${options.name} kept answering 429 (rate limit)`;
      await sleep(Math.min(maxWait, retryAfterMs(res.headers.get('retry-after')) ?? 1000 * 2 ** (attempt - 1)));
      continue;
    }
    if (res.status >= 500) {
      lastProblem = `${options.name} answered HTTP ${res.status}`;
      await sleep(Math.min(maxWait, 500 * 2 ** (attempt - 1)));
      continue;
    }
    throw new ImportSourceError(`${options.name} refused ${path} (HTTP ${res.status}): ${errorText(text)}`);
  }
  throw new Error(`${lastProblem}; the import will be tried again`);
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
