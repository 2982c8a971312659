import type { ZodError } from 'zod';

/** "amount: Expected number, received string" — the field first, so the client knows what to fix. */
export function describeZodError(error: ZodError, where?: string): string {
  return error.issues
    .slice(0, 5)
    .map((issue) => {
      const path = issue.path.length > 0 ? issue.path.join('.') : (where ?? 'body');
      return `${path}: ${issue.message}`;
    })
    .join('; ');
}
