import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fromRepoRoot } from '../../server/src/paths.js';

/**
 * A doc that names a file of the repository (`test/…ts`, `server/src/…ts`, `docs/….md`, `bench/…`)
 * sends the reader to it: one that no longer exists (a removed test, a renamed module) is a claim
 * nobody can check. Every such path in README.md and docs/ must exist, as a file or a directory.
 * CHANGELOG.md is left out: it records what was, files since removed included. Links are checked by
 * links.test.ts; this reads the text, code spans included, where paths are mostly named. The code's
 * comments that cite a doc (`docs/….md`, a top-level `….md`) are held to the same.
 */
const ROOT = fromRepoRoot('');

/** The repository's top-level directories a path may start with (what a doc can name). */
const TOP = ['server', 'test', 'docs', 'bench', 'web', 'contract', 'client-sdk', 'deploy', 'openapi', '.ci'];
const PATH = new RegExp(
  String.raw`(?<![\w./-])(?:${TOP.map((t) => t.replace('.', String.raw`\.`)).join('|')})/[\w.@/-]*[\w/]`,
  'g',
);
/** Top-level files a doc may name by themselves. */
const TOP_FILES = /(?<![\w./-])(?:[A-Z][A-Z_]+\.md|package\.json|tsconfig\.json|vitest\.config\.ts)(?![\w/])/g;

function docs(): string[] {
  const files = [join(ROOT, 'README.md')];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith('.md')) files.push(path);
    }
  };
  walk(join(ROOT, 'docs'));
  return files;
}

/** What a path names, trimmed of a trailing sentence's dot and of line (`:12`) or anchor suffixes. */
function clean(raw: string): string | undefined {
  const path = raw.replace(/[.:]+$/, '');
  // A pattern or a placeholder, not a file: `docs/*.md`, `test/<area>/…`, `bench/{a,b}`.
  if (/[*<>{}…]/.test(path)) return undefined;
  // The build's output folders (`npm run build`: server/dist, web/dist), not kept in the repository;
  // a file inside one is still named as missing: a doc says what the build writes there in words.
  if (/(^|\/)dist\/?$/.test(path)) return undefined;
  return path;
}

function missingIn(file: string): string[] {
  const missing: string[] = [];
  readFileSync(file, 'utf8')
    .split('\n')
    .forEach((line, i) => {
      for (const m of [...line.matchAll(PATH), ...line.matchAll(TOP_FILES)]) {
        // Followed by a wildcard or placeholder: a pattern (`docs/*.md` stops the match at the `*`).
        if (/^[*<{…]/.test(line.slice((m.index ?? 0) + m[0].length))) continue;
        const path = clean(m[0]);
        if (path && !existsSync(join(ROOT, path))) missing.push(`${relative(ROOT, file)}:${i + 1} names ${path}`);
      }
    });
  return missing;
}

/** The code's own files, whose comments cite the docs (`docs/ledger.md`, `ARCHITECTURE.md`). */
function code(): string[] {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (name === 'node_modules' || name === 'generated') continue;
      if (statSync(path).isDirectory()) walk(path);
      else if (/\.tsx?$/.test(name)) files.push(path);
    }
  };
  for (const dir of ['server/src', 'test', 'contract/src', 'web/src', 'bench']) walk(join(ROOT, dir));
  // This file names missing docs on purpose (its own examples).
  return files.filter((f) => !f.endsWith(join('test', 'docs', 'file-paths.test.ts')));
}

/** The docs a file of code cites that do not exist. */
function missingDocsIn(file: string): string[] {
  return missingIn(file).filter((m) => /names (docs\/[^ ]*\.md|[A-Z][A-Z_]+\.md)$/.test(m));
}

describe('file paths named in the docs', () => {
  it('exist', () => {
    const missing = docs().flatMap(missingIn);
    expect(missing, 'docs naming files that do not exist').toEqual([]);
  });

  it('exist where the code cites a doc', () => {
    const missing = code().flatMap(missingDocsIn);
    expect(missing, 'code citing docs that do not exist').toEqual([]);
  });

  it('are found where a doc names one (the check itself)', () => {
    const found = (text: string) => [...text.matchAll(PATH), ...text.matchAll(TOP_FILES)].map((m) => m[0]);
    expect(found('see `test/reliability/x.test.ts`, and server/src/app.ts.')).toEqual([
      'test/reliability/x.test.ts',
      'server/src/app.ts',
    ]);
    expect(found('the lead picture (ARCHITECTURE.md) and docs/ledger.md')).toEqual([
      'docs/ledger.md',
      'ARCHITECTURE.md',
    ]);
    expect(found('a URL https://example.com/test/a.ts is not a path')).toEqual([]);
  });
});
