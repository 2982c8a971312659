import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { nodeVersionSupported, REQUIRED_NODE } from '../../server/node-version.mjs';
import { fromRepoRoot } from '../../server/src/paths.js';

/**
 * An unsupported Node.js stops `npm ci` and `npm start` (and the service's entry) with a message
 * naming the running version, the required one and how to get it (server/node-version.mjs). Run
 * for real under an old Node.js: the machines ship Node.js 20 at /usr/bin/node (CI too, which
 * brings 24 from npm for the suite itself).
 */
function oldNode(): string | undefined {
  for (const candidate of ['/usr/bin/node', '/usr/local/bin/node']) {
    if (!existsSync(candidate)) continue;
    const version = execFileSync(candidate, ['--version'], { encoding: 'utf8' }).trim();
    if (!nodeVersionSupported(version)) return candidate;
  }
  return undefined;
}
const OLD_NODE = oldNode();
const describeWithOldNode = describe.skipIf(!OLD_NODE && !process.env.CI);

/**
 * `args` run with the old Node.js first on PATH (so npm and its scripts run on it too), in a
 * process group of its own: if the check ever lets a service start, the group is killed after
 * `timeoutMs` rather than left serving.
 */
async function runOnOldNode(
  command: string,
  args: string[],
  cwd: string,
  timeoutMs = 60_000,
): Promise<{ status: number | null; output: string }> {
  if (!OLD_NODE) throw new Error('no Node.js older than 22.17 on this machine (/usr/bin/node): CI needs one');
  const dataDir = mkdtempSync(join(tmpdir(), 'aa-node-version-data-'));
  const env: Record<string, string> = {
    PATH: `${dirname(OLD_NODE)}:${process.env.PATH ?? ''}`,
    HOME: process.env.HOME ?? tmpdir(),
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    npm_config_update_notifier: 'false',
    npm_config_fund: 'false',
    npm_config_audit: 'false',
  };
  const child = spawn(command, args, { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), timeoutMs);
  const [status] = (await once(child, 'close')) as [number | null];
  clearTimeout(timer);
  rmSync(dataDir, { recursive: true, force: true });
  return { status, output };
}

const versionOf = (node: string) => execFileSync(node, ['--version'], { encoding: 'utf8' }).trim();

function expectHowTo(output: string, command: string): void {
  expect(output).toContain(`this is Node.js ${versionOf(OLD_NODE!)}`);
  expect(output).toContain('needs Node.js >= 22.17');
  expect(output).toContain(`npx -y -p node@24 -- ${command}`);
  expect(output).toContain('nvm install 24');
  expect(output).toContain('https://nodejs.org/en/download');
}

describe('which Node.js is supported', () => {
  it('22.17 and later: 22.17.0, 22.22, 23, 24; not 22.16.x, 20 or 18', () => {
    expect(REQUIRED_NODE).toBe('22.17.0');
    expect(JSON.parse(readFileSync(fromRepoRoot('package.json'), 'utf8')).engines.node).toBe('>=22.17');
    for (const v of ['v22.17.0', '22.17.1', '22.22.0', '23.0.0', 'v24.11.1', '25.1.0'])
      expect(nodeVersionSupported(v), v).toBe(true);
    for (const v of ['v22.16.9', '22.9.0', 'v20.20.2', '18.20.4', '8.0.0'])
      expect(nodeVersionSupported(v), v).toBe(false);
  });

  it('the check passes on this Node.js (the one running the suite: CI brings 24 and 22.17)', () => {
    const result = spawnSync(process.execPath, [fromRepoRoot('server/node-version.mjs')], { encoding: 'utf8' });
    expect(result.status).toBe(0);
    expect(result.stderr).toBe('');
  });
});

describeWithOldNode("on an unsupported Node.js (the machine's /usr/bin/node)", () => {
  it(
    'npm start stops at once, before building anything, with the version, the required one and how to get it',
    { timeout: 90_000 },
    async () => {
      const { status, output } = await runOnOldNode('npm', ['start'], fromRepoRoot('.'));
      expect(status).not.toBe(0);
      expectHowTo(output, 'npm start');
      expect(output).not.toContain('vite');
    },
  );

  it(
    "the service's entry stops too when started directly (its first import is the check)",
    { timeout: 90_000 },
    async () => {
      const { status, output } = await runOnOldNode(
        OLD_NODE!,
        ['--import', 'tsx', 'server/src/main.ts'],
        fromRepoRoot('.'),
      );
      expect(status).toBe(1);
      expectHowTo(output, 'npm start');
      expect(output).not.toContain('listening');
    },
  );

  it(
    'npm ci fails with the same message (the root preinstall script), not a mere warning',
    { timeout: 90_000 },
    async () => {
      // The repository's own preinstall script and check, in a project of no dependency (a real npm ci
      // of the whole lockfile would download hundreds of packages first: npm runs the root's
      // preinstall after installing them).
      const dir = mkdtempSync(join(tmpdir(), 'aa-node-version-'));
      try {
        const root = JSON.parse(readFileSync(fromRepoRoot('package.json'), 'utf8'));
        writeFileSync(
          join(dir, 'package.json'),
          JSON.stringify({
            name: 'node-version-check',
            version: '1.0.0',
            private: true,
            engines: root.engines,
            scripts: { preinstall: root.scripts.preinstall },
          }),
        );
        writeFileSync(
          join(dir, 'package-lock.json'),
          JSON.stringify({
            name: 'node-version-check',
            version: '1.0.0',
            lockfileVersion: 3,
            requires: true,
            packages: { '': { name: 'node-version-check', version: '1.0.0', engines: root.engines } },
          }),
        );
        mkdirSync(join(dir, 'server'));
        copyFileSync(fromRepoRoot('server/node-version.mjs'), join(dir, 'server/node-version.mjs'));
        const { status, output } = await runOnOldNode('npm', ['ci'], dir);
        expect(status).not.toBe(0);
        expectHowTo(output, 'npm ci');
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});
