import { occurredAtProblem } from '@affiliate-attribution/contract';
import { InvalidInputError } from '../domain-errors.js';

export { MAX_FUTURE_SKEW_MS } from '@affiliate-attribution/contract';

/**
 * `occurred_at` of a click or conversion, from any channel (the API's contract checks the same
 * rule first; provider webhooks and imports arrive here directly): default now, else within the
 * contract's range (occurredAtProblem: not before 2000, at most 5 minutes ahead).
 */
export function resolveOccurredAt(value: string | undefined, now: Date = new Date()): Date {
  if (value === undefined) return now;
  const at = new Date(value);
  const problem = occurredAtProblem(at.getTime(), now.getTime());
  if (problem) throw new InvalidInputError(`occurred_at: ${problem}`);
  return at;
}
