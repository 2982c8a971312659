/**
 * CI runs `npm test` only, so the type tests (types.test.ts: expectTypeOf and @ts-expect-error)
 * are compiled here too: tsc fails on a type mismatch and on any @ts-expect-error line that is
 * not an error.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const repo = fileURLToPath(new URL('../../', import.meta.url));

function tsc(args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [`${repo}node_modules/typescript/bin/tsc`, ...args], {
      cwd: repo,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 170_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

describe('SDK type tests', () => {
  it('the SDK sources and test/sdk/types.test.ts type-check (so every @ts-expect-error is a real error)', async () => {
    const result = await tsc(['-p', 'test/sdk/tsconfig.typecheck.json']);
    expect(result.output).toBe('');
    expect(result.code).toBe(0);
  }, 180_000);
});
