import { DomainError } from '../domain-errors.js';
import { HttpError } from '../http/errors.js';

/**
 * The rule for a repeated request, in one place for every idempotent creation: a request the rules
 * refuse with a 4xx (no attribution any more, a click window passed since, an input rule) whose
 * idempotency key already names a record is a repeat of the request that created it, and answers
 * that record, deduped. A 5xx stays a failure (the client retries), and without a record the
 * refusal stands.
 *
 * `findExisting` returns undefined when there is no record, or when the caller must not reveal one
 * (the public snippet endpoint: see customers.service.ts, RepeatWithoutAttribution).
 */
export async function orRepeatOnRefusal<T, R>(
  attempt: () => Promise<T>,
  findExisting: () => Promise<R | undefined>,
): Promise<{ done: T } | { repeat: R }> {
  try {
    return { done: await attempt() };
  } catch (err) {
    if (!(err instanceof DomainError || (err instanceof HttpError && err.status < 500))) throw err;
    const existing = await findExisting();
    if (existing === undefined) throw err;
    return { repeat: existing };
  }
}
