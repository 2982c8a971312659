/**
 * CI runs `npm test` only, and the dashboard is outside the root tsconfig (its own: DOM, JSX,
 * bundler resolution): it is type-checked here, against the same contract as the server.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { fromRepoRoot } from '../../server/src/paths.js';

describe('the dashboard type-checks', () => {
  it('tsc -p web/tsconfig.json', () => {
    const result = spawnSync(
      process.execPath,
      [fromRepoRoot('node_modules/typescript/bin/tsc'), '-p', 'web/tsconfig.json'],
      { cwd: fromRepoRoot(''), encoding: 'utf8', timeout: 170_000 },
    );
    expect(result.stdout + result.stderr).toBe('');
    expect(result.status).toBe(0);
  }, 180_000);
});
