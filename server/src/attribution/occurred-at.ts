import { BadRequestError } from '../http/errors.js';

/** Clocks drift; a client's "now" may run a little ahead of ours, but no further than this. */
export const MAX_FUTURE_SKEW_MS = 5 * 60 * 1000;

/** `occurred_at` of a click or conversion: default now, never more than 5 minutes ahead. */
export function resolveOccurredAt(value: string | undefined, now: Date = new Date()): Date {
  if (value === undefined) return now;
  const at = new Date(value);
  if (Number.isNaN(at.getTime())) throw new BadRequestError('occurred_at: Invalid datetime');
  if (at.getTime() - now.getTime() > MAX_FUTURE_SKEW_MS) {
    throw new BadRequestError('occurred_at: must not be more than 5 minutes in the future');
  }
  return at;
}
