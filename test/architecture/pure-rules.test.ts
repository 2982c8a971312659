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
    entry.isDirectory()
      ? sourceFiles(join(dir, entry.name))
      : entry.name.endsWith('.ts')
        ? [join(dir, entry.name)]
        : [],
  );
}

/** What the pure rules may use at run time: each other, the domain's errors and identifiers, and libraries that do no I/O. */
const PURE_VALUE_IMPORTS = [
  /^\.\/[\w-]+\.js$/,
  /^\.\.\/(attribution|charges)\/[\w-]+\.js$/,
  /^\.\.\/(domain-errors|identifiers)\.js$/,
  /^(decimal\.js|currency-codes|lru-cache|disposable-email-domains-js|@affiliate-attribution\/contract)$/,
];

/** The module specifiers a file needs at run time: `import type` and `export type` are erased. */
function valueImportsOf(text: string): string[] {
  const found: string[] = [];
  for (const match of text.matchAll(/^(?:import|export)\s+(type\s+)?(?:[^;]*?\sfrom\s+)?['"]([^'"]+)['"]/gm)) {
    if (!match[1]) found.push(match[2]);
  }
  for (const match of text.matchAll(/\bimport\s*\(\s*['"]([^'"]+)['"]/g)) found.push(match[1]);
  return found;
}

/** Every module specifier a file imports or re-exports, static or dynamic. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const found: string[] = [];
  for (const match of text.matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*)['"]([^'"]+)['"]/g)) found.push(match[1]);
  return found;
}

describe('the pure rules (attribution/, charges/): domain errors mapped at the edge, no I/O', () => {
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
    expect(
      /(^|\/)http\//.test(resolve(join(SERVER, 'attribution', 'resolver.ts'), '..', spec).slice(SERVER.length)),
    ).toBe(true);
  });

  it.each(PURE_RULES)(
    'server/src/%s/ does no I/O: no repository, service, database or ORM reaches it at run time (gather -> decide -> write)',
    (area) => {
      const offending = sourceFiles(join(SERVER, area)).flatMap((file) =>
        valueImportsOf(readFileSync(file, 'utf8'))
          .filter((spec) => !PURE_VALUE_IMPORTS.some((allowed) => allowed.test(spec)))
          .map((spec) => `${file.slice(SERVER.length + 1)} imports ${spec}`),
      );
      expect(offending).toEqual([]);
    },
  );

  it.each(PURE_RULES)(
    'server/src/%s/ awaits nothing: the facts are gathered before a rule is asked (repositories passed in count too)',
    (area) => {
      const waiting = sourceFiles(join(SERVER, area)).flatMap((file) =>
        readFileSync(file, 'utf8')
          .split('\n')
          .flatMap((line, i) =>
            /^\s*(\/\/|\*|\/\*)/.test(line) || !/\b(await|async)\b/.test(line)
              ? []
              : [`${file.slice(SERVER.length + 1)}:${i + 1}: ${line.trim()}`],
          ),
      );
      expect(waiting).toEqual([]);
    },
  );

  it('the I/O check sees value imports, multi-line ones too, and lets type-only ones pass', () => {
    const text = [
      "import type { ClicksRepository } from '../modules/clicks/clicks.repository.js';",
      "import {\n  thing,\n  other,\n} from '../modules/customers/customers.service.js';",
      "import { Decimal } from 'decimal.js';",
      "export { x } from '../db/sql.js';",
    ].join('\n');
    expect(valueImportsOf(text)).toEqual(['../modules/customers/customers.service.js', 'decimal.js', '../db/sql.js']);
  });

  it('maps each kind of domain error to its status, with its message, in one place', () => {
    expect(errorResponse(new InvalidInputError('amount: must be >= 0'))).toEqual({
      status: 400,
      message: 'amount: must be >= 0',
    });
    expect(errorResponse(new NotFoundError())).toEqual({ status: 404, message: ErrorMessages.notFound });
    expect(errorResponse(new NoAttributionError())).toEqual({ status: 404, message: ErrorMessages.noAttribution });
    expect(errorResponse(new ConflictError('amount: refunds would total 120'))).toEqual({
      status: 409,
      message: 'amount: refunds would total 120',
    });
    expect(errorResponse(new AttributionWindowExpiredError())).toEqual({
      status: 410,
      message: ErrorMessages.attributionWindowExpired,
    });
  });
});
