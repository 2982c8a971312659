import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Every route group goes through the one request pipeline (server/src/http/stages.ts): a module
 * gives its stages to the list (with their paths) and mounts routes, never a middleware chain of
 * its own (issue 37: /public, /partner, /auth and /webhooks each built theirs). test/api/route-groups.test.ts
 * checks the list as mounted and the answers; this keeps new chains from appearing beside it.
 */
const SERVER = resolve(import.meta.dirname, '../../server/src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sourceFiles(join(dir, entry.name))
      : entry.name.endsWith('.ts')
        ? [join(dir, entry.name)]
        : [],
  );
}

/** Mounting middleware, or running a stage outside the list. */
const OWN_CHAIN = /\b(app|router)\.use\s*\(|\bexpressMiddleware\s*\(|\bmountPipeline\s*\(/;

export function ownChains(text: string): string[] {
  return text
    .split('\n')
    .flatMap((line, i) => (!/^\s*(\/\/|\*)/.test(line) && OWN_CHAIN.test(line) ? [`${i + 1}: ${line.trim()}`] : []));
}

describe('one request pipeline', () => {
  it('no module nor the webhooks mounts a middleware chain of its own', () => {
    const found = ['modules', 'webhooks'].flatMap((area) =>
      sourceFiles(join(SERVER, area)).flatMap((file) =>
        ownChains(readFileSync(file, 'utf8')).map((hit) => `${file.slice(SERVER.length + 1)}:${hit}`),
      ),
    );
    expect(found).toEqual([]);
  });

  it('the check sees the chains the groups used to build (it can fail)', () => {
    expect(ownChains('  app.use(PUBLIC_PREFIX, body, expressMiddleware(unstorableTextStage));')).toHaveLength(1);
    expect(ownChains('    app.use(AUTH_BASE_PATH, (req, _res, next) => {')).toHaveLength(1);
    expect(
      ownChains('  app.post(signInPaths, signInLimit);\n  app.all(`${AUTH_BASE_PATH}/*`, toNodeHandler(this.auth));'),
    ).toEqual([]);
  });
});
