import { z } from 'zod';

/** The one error body every failure answers with, whatever the status. */
export const ErrorBody = z
  .object({
    success: z.literal(false).describe('Always false on an error.'),
    message: z
      .string()
      .describe(
        'Human readable explanation; for validation failures it names the field, e.g. "amount: Expected number, received string".',
      ),
  })
  .describe('Error envelope');
export type ErrorBody = z.infer<typeof ErrorBody>;

/** Messages that clients may match on; the spec fixes their wording. */
export const ErrorMessages = {
  invalidApiKey: 'Missing or invalid API key',
  invalidAdminToken: 'Missing or invalid admin token',
  noAttribution: 'No attribution found',
  attributionWindowExpired: 'Attribution window expired',
  forbidden: 'This resource belongs to another organization',
  notFound: 'Not found',
  internal: 'Internal server error',
  nulCharacters: 'Malformed request: NUL characters (U+0000) are not allowed',
  /** After the field's name: "external_id: ill-formed Unicode (a lone UTF-16 surrogate) is not allowed". */
  loneSurrogate: 'ill-formed Unicode (a lone UTF-16 surrogate) is not allowed',
  /** 503: the database cannot be reached or does not answer (restarting, down, frozen). */
  databaseUnavailable: 'Service temporarily unavailable; safe to retry',
  /** 503: the database answered but cancelled the statement, past its statement_timeout or lock_timeout. */
  databaseTimeout: 'The database took too long to answer; safe to retry',
} as const;

/**
 * Every error status the service answers, with what it means: the contract's routes declare
 * theirs from here (a route's own description may say more). The groups below are what the HTTP
 * layer answers before any route's rules (server/src/http/stages.ts), declared once for the routes
 * they concern (contract.ts, and the resources' JSON-body routes).
 */
export const errorResponses = {
  400: ErrorBody.describe('Invalid request: a missing or malformed field, named in the message.'),
  401: ErrorBody.describe('Missing or invalid API key.'),
  403: ErrorBody.describe('The resource belongs to another organization.'),
  404: ErrorBody.describe('Not found.'),
  409: ErrorBody.describe('Conflict, e.g. the slug is already taken.'),
  410: ErrorBody.describe("Attribution window expired: the click is older than the program's click window."),
  413: ErrorBody.describe('The request body is larger than 1 MiB.'),
  415: ErrorBody.describe('The request body is not JSON (`Content-Type` must be `application/json`).'),
  429: ErrorBody.describe('Too many requests with this API key; retry after `Retry-After` seconds.'),
  500: ErrorBody.describe('Internal error; safe to retry.'),
  503: ErrorBody.describe(
    'The database is unavailable (for example restarting: "Service temporarily unavailable; safe to retry") or took too long to answer (a statement or lock timeout: "The database took too long to answer; safe to retry"); safe to retry after `Retry-After` seconds.',
  ),
} as const;

/** Any route: a request that cannot be read, the database unavailable, an internal error. */
export const everyRouteErrorResponses = {
  400: ErrorBody.describe(
    'Malformed request, as the message says: NUL characters (U+0000) or an invalid %-escape in the URL, a body that is not valid JSON.',
  ),
  500: errorResponses[500],
  503: errorResponses[503],
} as const;

/** The merchant routes (/api): the API key, its rate limit, and the JSON body limit (any method may carry a body). */
export const apiKeyErrorResponses = {
  401: errorResponses[401],
  413: errorResponses[413],
  429: errorResponses[429],
} as const;

/** A route taking a JSON body (POST, PUT, PATCH under /api and /admin), before its own rules: the JSON body stage. */
export const jsonBodyErrorResponses = {
  400: ErrorBody.describe('Invalid request: malformed JSON, or a missing or malformed field, named in the message.'),
  413: errorResponses[413],
  415: errorResponses[415],
} as const;

/** The statuses whose answers carry `Retry-After` (seconds): the rate limit, and an unavailable database. */
export const RETRY_AFTER_STATUSES: readonly number[] = [429, 503];
