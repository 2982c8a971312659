import { initClient, tsRestFetchApi, type ApiFetcherArgs } from '@ts-rest/core';
import { contract } from '@affiliate-attribution/contract';
import { modeHeaders } from './mode';

/**
 * The dashboard's API: a typed ts-rest client of the service's own contract, on the same /api
 * routes merchants' backends call. Its credential is the session cookie (HttpOnly: this code never
 * sees it); the browser sends it, and Origin, which the service checks against CSRF. In test mode
 * (mode.ts) every merchant request (/api/...) carries `X-Mode: test`: the service answers with the
 * organization's test data. The portal's partner routes (/partner/api) never carry it.
 */
export const api = initClient(contract, {
  baseUrl: '',
  baseHeaders: {},
  credentials: 'same-origin',
  throwOnUnknownStatus: false,
  api: fetchInMode,
});

/** The fetcher of every ts-rest client of the dashboard (a page with a client of its own passes it as `api`): the mode's header on /api requests. */
export function fetchInMode(args: ApiFetcherArgs) {
  return tsRestFetchApi(args.path.startsWith('/api/') ? { ...args, headers: withMode(args.headers) } : args);
}

/**
 * The mode's header added to a request's headers; a call may pin live mode whatever the switch says
 * (`extraHeaders: LIVE`: the session's own organization, say), which sends no header at all.
 */
function withMode(headers: Record<string, string>): Record<string, string> {
  const pinned = Object.keys(headers).find((name) => name.toLowerCase() === 'x-mode');
  if (pinned === undefined) return { ...headers, ...modeHeaders() };
  const { [pinned]: value, ...rest } = headers;
  return value === 'live' ? rest : { ...rest, [pinned]: value };
}

/** `extraHeaders` of a call that acts on live data whatever the switch says (withMode drops it before sending). */
export const LIVE = { 'x-mode': 'live' } as const;

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
  /** The field a validation message names (`name: Required` -> `name`), if any. */
  get field(): string | undefined {
    const match = /^([a-z_][a-z0-9_.]*): /.exec(this.message);
    return match?.[1];
  }
  get detail(): string {
    return this.field ? this.message.slice(this.field.length + 2) : this.message;
  }
}

type Answer = { status: number; body: unknown };

/** The `data` of a success, else an ApiError with the service's message (401: back to sign-in). */
export function data<R extends Answer>(
  res: R,
): Extract<R, { status: 200 | 201 | 202 }>['body'] extends { data: infer D } ? D : never {
  if (res.status === 200 || res.status === 201 || res.status === 202) return (res.body as { data: never }).data;
  if (res.status === 401 && !location.pathname.endsWith('/sign-in')) {
    window.dispatchEvent(new Event('session-ended'));
  }
  const message =
    typeof res.body === 'object' && res.body !== null && 'message' in res.body
      ? String(res.body.message)
      : `Request failed (${res.status})`;
  throw new ApiError(res.status, message);
}

/** better-auth's endpoints (under /auth): sign-in, sign-out, session, password reset. */
export async function auth<T = unknown>(path: string, body?: unknown): Promise<T> {
  const res = await fetch(`/auth${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    credentials: 'same-origin',
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  const parsed = text ? (JSON.parse(text) as unknown) : null;
  if (!res.ok) {
    const message =
      res.status === 429
        ? `Too many attempts; try again in ${res.headers.get('retry-after') ?? 'a few'} seconds`
        : ((parsed as { message?: string } | null)?.message ?? `Request failed (${res.status})`);
    throw new ApiError(res.status, message);
  }
  return parsed as T;
}

export interface SessionUser {
  id: string;
  email: string;
  name: string;
  role: 'owner' | 'member';
  organizationId: string;
}
