import type { RequestValidationError } from '@ts-rest/express';
import type { ZodError, ZodIssue } from 'zod';
import { BadRequestError } from './errors.js';

/**
 * The most characters of a client's own input that an error message repeats: enough to recognise
 * the value, while a 1 MiB field or a 16 KiB path is never echoed back whole (nor into logs and
 * dashboards that keep error messages).
 */
export const ECHO_MAX_CHARS = 100;

/**
 * A client-supplied value as error messages repeat it: cut to ECHO_MAX_CHARS, with an ellipsis
 * saying so. Every message that includes input (validation messages, unknown paths and ids) passes
 * the input through here: the bound is stated once.
 */
export function echoInput(value: string): string {
  if (value.length <= ECHO_MAX_CHARS) return value;
  // Never end on the first half of a surrogate pair: the answer would carry a lone surrogate.
  const end = isHighSurrogate(value.charCodeAt(ECHO_MAX_CHARS - 1)) ? ECHO_MAX_CHARS - 1 : ECHO_MAX_CHARS;
  return `${value.slice(0, end)}…`;
}

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;

/** "amount: Expected number, received string" — the field first, so the client knows what to fix. */
export function describeZodError(error: ZodError, where?: string): string {
  return error.issues
    .slice(0, 5)
    .map((issue) => {
      // A path segment can be a key the client chose (a record's keys), as long as it liked.
      const path =
        issue.path.length > 0 ? issue.path.map((segment) => echoInput(String(segment))).join('.') : (where ?? 'body');
      return `${path}: ${issueMessage(issue)}`;
    })
    .join('; ');
}

/**
 * Zod writes some offending values into its messages ("Invalid enum value. Expected 'a' | 'b',
 * received '<the value>'", "Unrecognized key(s) in object: '<key>'"): those values, cut.
 */
function issueMessage(issue: ZodIssue): string {
  const echoed: string[] = [];
  if ('received' in issue && typeof issue.received === 'string') echoed.push(issue.received);
  if (issue.code === 'unrecognized_keys') echoed.push(...issue.keys);
  let message = issue.message;
  for (const value of echoed) {
    // split/join rather than replaceAll: the input may hold `$&`-style replacement patterns.
    if (value.length > ECHO_MAX_CHARS) message = message.split(value).join(echoInput(value));
  }
  return message;
}

/** ts-rest's request validation failures, as the one 400 envelope naming the first failing part. */
export function validationErrorHandler(err: RequestValidationError): never {
  const [where, zodError] = (
    [
      ['path', err.pathParams],
      ['query', err.query],
      ['headers', err.headers],
      ['body', err.body],
    ] as const
  ).find(([, e]) => e !== null)!;
  throw new BadRequestError(describeZodError(zodError!, where));
}
