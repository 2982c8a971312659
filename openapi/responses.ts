import { type SchemaObject } from 'openapi3-ts/oas30';
import type { z } from 'zod';
import { accessMessage, ErrorMessages } from '@affiliate-attribution/contract';
import type { RouteEntry, SecurityKind } from './routes.js';

/**
 * How the document describes the contract's responses: success descriptions, the Retry-After
 * header, and the messages of the error examples.
 */

export const STATUS_MESSAGES: Record<number, string> = {
  401: ErrorMessages.invalidApiKey,
  403: ErrorMessages.forbidden,
  410: ErrorMessages.attributionWindowExpired,
  413: 'Request body exceeds the 1 MiB limit',
  415: 'Content-Type must be application/json',
  429: 'Too many requests; retry later',
  500: ErrorMessages.internal,
  503: 'Service temporarily unavailable; safe to retry',
};

export const RETRY_AFTER_HEADER = {
  description: 'Seconds to wait before retrying.',
  schema: { type: 'integer', minimum: 1 },
  example: 1,
} as const;

export function successDescription(status: number, hasDeduped: boolean, statuses: number[]): string {
  if (status === 201) return hasDeduped ? 'Created (`deduped: false`).' : 'Created.';
  if (status === 200 && hasDeduped && statuses.includes(201)) {
    return 'The request repeated an earlier one: the existing record, unchanged, with `deduped: true`.';
  }
  if (status === 202) return 'Accepted.';
  if (status === 204) return 'No content.';
  return 'OK.';
}

export function errorMessageFor(
  status: number,
  entry: RouteEntry,
  bodySchema: SchemaObject | undefined,
  security: SecurityKind,
): string {
  const bodyFields = Object.keys(bodySchema?.properties ?? {});
  if (status === 400) {
    const required = bodySchema?.required?.[0];
    if (required) return `${required}: Required`;
    if (bodyFields.length > 0) return 'Malformed JSON body';
    const query = (entry.route.query as z.AnyZodObject | undefined)?.shape as Record<string, unknown> | undefined;
    if (query && 'limit' in query) return 'limit: Number must be less than or equal to 100';
    return entry.route.method === 'GET' || entry.route.method === 'DELETE'
      ? ErrorMessages.nulCharacters
      : 'Malformed JSON body';
  }
  if (status === 401 && security === 'admin') return ErrorMessages.invalidAdminToken;
  if (status === 404) {
    const attributes = ['cookie_id', 'ref', 'click_id', 'cookieId'].some((f) => bodyFields.includes(f));
    return attributes ? ErrorMessages.noAttribution : ErrorMessages.notFound;
  }
  // A route with an access rule (contract/src/common/access.ts): its refusal is the example.
  if (status === 403 && accessMessage(entry.route)) return accessMessage(entry.route)!;
  if (status === 409 && bodyFields.includes('slug')) return 'slug: "jane-doe" is already taken';
  return STATUS_MESSAGES[status] ?? 'Request failed';
}
