/**
 * Every error the SDK throws extends {@link AffiliateAttributionError}; every error answered by
 * the service extends {@link APIError} and carries the HTTP status, the service's message and
 * the request id to quote when asking for support.
 */

/** The message the service answers with when a cookie id, slug, click id or customer id resolves to nothing. */
export const NO_ATTRIBUTION_MESSAGE = 'No attribution found';

/** Base class of every error thrown by the SDK. */
export class AffiliateAttributionError extends Error {
  /** HTTP status of the response; undefined when no response was received. */
  readonly status: number | undefined;
  /** The `X-Request-Id` of the request (sent by the SDK, echoed by the service). */
  readonly requestId: string | undefined;

  constructor(message: string, options: { status?: number; requestId?: string; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.status = options.status;
    this.requestId = options.requestId;
  }
}

export interface APIErrorInit {
  status: number;
  message: string;
  requestId?: string;
  headers?: Headers;
  body?: unknown;
}

/** The service answered with an error status (its body is `{ success: false, message }`). */
export class APIError extends AffiliateAttributionError {
  declare readonly status: number;
  /** Response headers. */
  readonly headers: Headers | undefined;
  /** The parsed response body (the error envelope), or the raw text when it was not JSON. */
  readonly body: unknown;

  constructor(init: APIErrorInit) {
    super(init.message, { status: init.status, requestId: init.requestId });
    this.headers = init.headers;
    this.body = init.body;
  }

  /** The most specific error class for a status and message. */
  static from(init: APIErrorInit): APIError {
    const { status } = init;
    if (status === 400) return new ValidationError(init);
    if (status === 401) return new AuthenticationError(init);
    if (status === 403) return new PermissionDeniedError(init);
    if (status === 404)
      return init.message === NO_ATTRIBUTION_MESSAGE ? new AttributionNotFoundError(init) : new NotFoundError(init);
    if (status === 409) return new ConflictError(init);
    if (status === 410) return new AttributionWindowExpiredError(init);
    if (status === 429) return new RateLimitError(init);
    if (status >= 500) return new InternalServerError(init);
    return new APIError(init);
  }
}

/** 400: a missing or malformed field; the message names it (e.g. "amount: Expected number, received string"). */
export class ValidationError extends APIError {}

/** 401: the API key is missing, invalid or revoked. */
export class AuthenticationError extends APIError {}

/** 403: the resource belongs to another organization. */
export class PermissionDeniedError extends APIError {}

/** 404: the resource does not exist. */
export class NotFoundError extends APIError {}

/**
 * 404 "No attribution found": the cookie id, slug or click id was not issued by this organization,
 * or (for a recurring conversion) the customer was never tracked.
 */
export class AttributionNotFoundError extends NotFoundError {}

/** 409: a conflict, e.g. an affiliate slug already used by another membership. */
export class ConflictError extends APIError {}

/** 410: the click is older than the program's click attribution window. */
export class AttributionWindowExpiredError extends APIError {}

/** 429: rate limited. Retried automatically, honouring `Retry-After`. */
export class RateLimitError extends APIError {
  /** Seconds the service asked to wait (`Retry-After`), when it said. */
  readonly retryAfterSeconds: number | undefined;

  constructor(init: APIErrorInit) {
    super(init);
    const ms = init.headers ? parseRetryAfterMs(init.headers) : undefined;
    this.retryAfterSeconds = ms === undefined ? undefined : ms / 1000;
  }
}

/** 5xx: the service failed; the request is safe to retry (and was retried). */
export class InternalServerError extends APIError {}

/** No response: DNS failure, refused or reset connection. `cause` holds the underlying error. */
export class ConnectionError extends AffiliateAttributionError {
  constructor(message: string, options: { requestId?: string; cause?: unknown } = {}) {
    super(message, options);
  }
}

/** No response within `timeoutMs`. */
export class TimeoutError extends ConnectionError {}

/** The caller aborted the request through its `signal`; never retried. */
export class UserAbortError extends AffiliateAttributionError {
  constructor(options: { requestId?: string; cause?: unknown } = {}) {
    super('Request aborted by the caller', options);
  }
}

/**
 * Milliseconds to wait according to `Retry-After` (seconds or an HTTP date) or `Retry-After-Ms`;
 * undefined when absent or unparsable.
 */
export function parseRetryAfterMs(headers: Headers, now: number = Date.now()): number | undefined {
  const ms = headers.get('retry-after-ms');
  if (ms !== null && ms.trim() !== '') {
    const value = Number(ms);
    if (Number.isFinite(value) && value >= 0) return value;
  }
  const header = headers.get('retry-after');
  if (header === null || header.trim() === '') return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return seconds >= 0 ? seconds * 1000 : undefined;
  const date = Date.parse(header);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}
