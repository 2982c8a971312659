import { z } from 'zod';

/** The one error body every failure answers with, whatever the status. */
export const ErrorBody = z
  .object({
    success: z.literal(false).describe('Always false on an error.'),
    message: z.string().describe('Human readable explanation; for validation failures it names the field, e.g. "amount: Expected number, received string".'),
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
} as const;

export const errorResponses = {
  400: ErrorBody.describe('Invalid request: a missing or malformed field, named in the message.'),
  401: ErrorBody.describe('Missing or invalid API key.'),
  403: ErrorBody.describe('The resource belongs to another organization.'),
  404: ErrorBody.describe('Not found.'),
  409: ErrorBody.describe('Conflict, e.g. the slug is already taken.'),
  410: ErrorBody.describe('Attribution window expired: the click is older than the program\'s click window.'),
  500: ErrorBody.describe('Internal error; safe to retry.'),
} as const;
