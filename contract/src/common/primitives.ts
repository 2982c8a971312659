import { z } from 'zod';

export const Uuid = z.string().uuid();
/** An e-mail address a partner types: spaces around it dropped, at most 320 characters (SMTP's limit). */
export const TrimmedEmail = z.string().trim().email().max(320);
export const Timestamp = z.string().describe('ISO-8601 timestamp in UTC.');

/** Input timestamps accept any ISO-8601 offset; the service stores and answers them in UTC. */
export const TimestampInput = z.string().datetime({ offset: true });

/**
 * The earliest `occurred_at` accepted: no click or charge of an affiliate program predates it, and
 * every timestamp from it on has the same four-digit, ISO-8601 form in PostgreSQL and JavaScript
 * (years 0000-0099 do not: PostgreSQL has no year 0 and JavaScript reads years below 100 as 19xx).
 */
export const OCCURRED_AT_MIN = '2000-01-01T00:00:00Z';
/** Clocks drift; a client's "now" may run a little ahead of ours, but no further than this. */
export const MAX_FUTURE_SKEW_MS = 5 * 60 * 1000;
const OCCURRED_AT_MIN_MS = Date.parse(OCCURRED_AT_MIN);

/** Why an `occurred_at` (epoch ms) is refused, or undefined: from OCCURRED_AT_MIN to 5 minutes after now. */
export function occurredAtProblem(at: number, now: number = Date.now()): string | undefined {
  if (Number.isNaN(at)) return 'Invalid datetime';
  if (at < OCCURRED_AT_MIN_MS) return `must not be before ${OCCURRED_AT_MIN}`;
  if (at - now > MAX_FUTURE_SKEW_MS) return 'must not be more than 5 minutes in the future';
  return undefined;
}

/** When something happened, as a client reports it (see occurredAtProblem). */
export const OccurredAtInput = TimestampInput.superRefine((value, ctx) => {
  const problem = occurredAtProblem(Date.parse(value));
  if (problem) ctx.addIssue({ code: z.ZodIssueCode.custom, message: problem });
});

export const Money = z.number().finite();

/**
 * The largest amount accepted on input, in major units (one trillion): far above any real
 * charge, and small enough that every commission derived from it fits the stored precision.
 */
export const MAX_MONEY_INPUT = 1_000_000_000_000;
/** An amount sent by a client: finite, 0 to MAX_MONEY_INPUT. */
export const MoneyInput = Money.min(0).max(MAX_MONEY_INPUT);
export const CurrencyCode = z
  .string()
  .regex(/^[A-Za-z]{3}$/, 'Expected an ISO 4217 currency code such as USD')
  .describe('ISO 4217 currency code; case-insensitive on input, upper case in responses.');

/** Non-empty identifier strings chosen by the merchant or issued by the service. */
export const Identifier = z.string().min(1).max(255);

export const Deduped = z
  .boolean()
  .describe(
    'True when this request repeated an earlier one and the existing record is returned unchanged; false when the record was created now.',
  );

/**
 * On every resource: which world a row belongs to (shared/spec/test-mode.md). Every row a request
 * reads or writes is of the request's mode (test data lives in a test organization), so the server
 * fills it in one place from the request (server/src/http/livemode.ts) wherever a response schema
 * declares it: a preprocess (identity) makes the server-side input type optional, while clients
 * and the OpenAPI document see a required boolean.
 */
export const Livemode = z
  .preprocess((value) => value, z.boolean())
  .describe(
    'True for live data; false for test data (made with a test key `svc_test_…`, a test-mode dashboard session, or `"mode": "test"` on a public endpoint). Each is visible only in its own mode.',
  );

/** The mode of an API key or of a request: `live` (the default) or `test`. */
export const Mode = z
  .enum(['live', 'test'])
  .describe('`live` (real data) or `test` (test data, invisible to live keys).');
export type Mode = z.infer<typeof Mode>;
