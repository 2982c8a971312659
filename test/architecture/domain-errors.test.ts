import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ErrorMessages } from '@affiliate-attribution/contract';
import { describe, expect, it } from 'vitest';
import {
  AttributionWindowExpiredError,
  ConflictError,
  InvalidInputError,
  NoAttributionError,
  NotFoundError,
} from '../../server/src/domain-errors.js';
import { errorResponse } from '../../server/src/http/error-handler.js';

/**
 * The pure rules know nothing of HTTP (issue 37: attribution/ threw HTTP errors): they throw the
 * domain's errors (server/src/domain-errors.ts), and the edge maps them to statuses in one place
 * (http/error-handler.ts). The API tests pin the wire answers; this pins the boundary.
 */
const SERVER = resolve(import.meta.dirname, '../../server/src');
const PURE_RULES = ['attribution', 'charges'];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  );
}

/** Every module specifier a file imports or re-exports, static or dynamic. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const found: string[] = [];
  for (const match of text.matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*)['"]([^'"]+)['"]/g)) found.push(match[1]!);
  return found;
}

describe('the pure rules throw domain errors, mapped to HTTP at the edge', () => {
  it.each(PURE_RULES)('server/src/%s/ imports nothing of server/src/http/ (nor express)', (area) => {
    const offending = sourceFiles(join(SERVER, area)).flatMap((file) =>
      importsOf(file)
        .filter((spec) => /(^|\/)http\//.test(resolve(file, '..', spec).slice(SERVER.length)) || /^express$/.test(spec))
        .map((spec) => `${file.slice(SERVER.length + 1)} imports ${spec}`),
    );
    expect(offending).toEqual([]);
  });

  it('the import check sees an import of http/ (it can fail)', () => {
    const spec = '../http/errors.js';
    expect(/(^|\/)http\//.test(resolve(join(SERVER, 'attribution', 'resolver.ts'), '..', spec).slice(SERVER.length))).toBe(true);
  });

  it('maps each kind of domain error to its status, with its message, in one place', () => {
    expect(errorResponse(new InvalidInputError('amount: must be >= 0'))).toEqual({ status: 400, message: 'amount: must be >= 0' });
    expect(errorResponse(new NotFoundError())).toEqual({ status: 404, message: ErrorMessages.notFound });
    expect(errorResponse(new NoAttributionError())).toEqual({ status: 404, message: ErrorMessages.noAttribution });
    expect(errorResponse(new ConflictError('amount: refunds would total 120'))).toEqual({ status: 409, message: 'amount: refunds would total 120' });
    expect(errorResponse(new AttributionWindowExpiredError())).toEqual({ status: 410, message: ErrorMessages.attributionWindowExpired });
  });
});
