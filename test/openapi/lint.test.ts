import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../../', import.meta.url));

describe('redocly lint (recommended rules)', () => {
  it('reports zero errors and zero warnings on openapi/openapi.json', async () => {
    const redocly = join(root, 'node_modules', '.bin', 'redocly');
    const result = await run(
      redocly,
      ['lint', '--config', 'openapi/redocly.yaml', '--format', 'json', 'openapi/openapi.json'],
      {
        cwd: root,
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
        maxBuffer: 20 * 1024 * 1024,
      },
    ).catch((err: { stdout: string; stderr: string; code: number }) => err);
    const out = result.stdout;
    const start = out.indexOf('{');
    expect(start, `no JSON report from redocly:\n${out}\n${result.stderr}`).toBeGreaterThanOrEqual(0);
    const json = JSON.parse(out.slice(start)) as {
      totals: { errors: number; warnings: number };
      problems: { ruleId: string; message: string }[];
    };
    const problems = json.problems.map((p) => `${p.ruleId}: ${p.message}`).join('\n');
    expect(json.totals, problems).toMatchObject({ errors: 0, warnings: 0 });
  }, 60_000);

  it('runs the recommended rules without exceptions (the one for the missing licence is gone with it)', () => {
    const config = readFileSync(join(root, 'openapi', 'redocly.yaml'), 'utf8');
    const settings = config.split('\n').filter((line) => line.trim() !== '' && !line.trimStart().startsWith('#'));
    expect(settings).toEqual(['extends:', '  - recommended']);
  });
});
