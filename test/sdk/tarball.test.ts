/**
 * Packs the SDK exactly as it would be published (`npm pack`, whose prepack builds it), installs
 * the tarball into an empty project outside the repository, compiles merchant files against it
 * with a strict TypeScript configuration, and runs them against the live server.
 */
import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMerchant } from '../support/api.js';
import { testServer } from '../support/server.js';

const repo = fileURLToPath(new URL('../../', import.meta.url));
const sdkDir = join(repo, 'client-sdk');
const fixtures = fileURLToPath(new URL('./fixtures/tarball/', import.meta.url));

/**
 * npm run from `npm test` exports its own settings (npm_config_local_prefix, npm_package_*...) that
 * would make a nested npm act on the repository root: keep only network and cache settings.
 */
function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const keep =
    /^npm_config_(registry|cache|userconfig|globalconfig|cafile|strict_ssl|proxy|https_proxy|noproxy|prefer_offline|offline)$/i;
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^npm_/i.test(key) && !keep.test(key)) continue;
    if (key === 'INIT_CWD' || key === 'NODE_OPTIONS') continue;
    env[key] = value;
  }
  return { ...env, ...extra };
}

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command without blocking the event loop (the server under test lives in this process). */
function run(
  command: string,
  args: string[],
  options: { cwd: string; env?: Record<string, string>; timeoutMs?: number },
): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: childEnv(options.env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 180_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

function expectSuccess(result: Result, what: string): void {
  expect(result.code, `${what} failed:\n${result.stdout}\n${result.stderr}`).toBe(0);
}

function versionOf(pkg: string): string {
  return JSON.parse(readFileSync(join(repo, 'node_modules', pkg, 'package.json'), 'utf8')).version;
}

describe('the packed SDK in an empty project', () => {
  let work: string;
  let project: string;
  let tarball: string;
  let packedName: string;
  let tsc: string;

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'aa-sdk-tarball-'));
    project = join(work, 'merchant');
    mkdirSync(join(project, 'src'), { recursive: true });
    mkdirSync(join(project, 'bad'), { recursive: true });

    // As client-sdk/README.md says: `npm run sdk:pack` at the root of the clone writes the tarball there.
    // The pack builds both entries' declarations (index and server): minutes on a busy machine.
    const packed = await run('npm', ['run', 'sdk:pack', '--', '--json'], { cwd: repo, timeoutMs: 420_000 });
    expectSuccess(packed, 'npm run sdk:pack');
    // The prepack build logs to stdout first; npm's JSON report is the array that starts on a line of its own.
    const [info] = JSON.parse(packed.stdout.slice(packed.stdout.search(/^\[$/m)));
    packedName = info.filename;
    tarball = join(work, info.filename);
    copyFileSync(join(repo, info.filename), tarball);
    rmSync(join(repo, info.filename));

    writeFileSync(
      join(project, 'package.json'),
      JSON.stringify({ name: 'merchant-backend', private: true, type: 'module' }, null, 2),
    );
    const installed = await run(
      'npm',
      [
        'install',
        '--no-audit',
        '--no-fund',
        '--prefer-offline',
        tarball,
        `typescript@${versionOf('typescript')}`,
        `@types/node@${versionOf('@types/node')}`,
      ],
      { cwd: project },
    );
    expectSuccess(installed, 'npm install');
    tsc = join(project, 'node_modules', 'typescript', 'bin', 'tsc');

    copyFileSync(join(fixtures, 'flow.ts.txt'), join(project, 'src', 'flow.ts'));
    copyFileSync(join(fixtures, 'legacy.cts.txt'), join(project, 'src', 'legacy.cts'));
    copyFileSync(join(fixtures, 'server.ts.txt'), join(project, 'src', 'server.ts'));
    copyFileSync(join(fixtures, 'wrong.ts.txt'), join(project, 'bad', 'wrong.ts'));
    const strict = {
      target: 'ES2022',
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      strict: true,
      types: ['node'],
    };
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify(
        { compilerOptions: { ...strict, skipLibCheck: false, outDir: 'out', rootDir: 'src' }, include: ['src'] },
        null,
        2,
      ),
    );
    writeFileSync(
      join(project, 'tsconfig.bad.json'),
      JSON.stringify({ compilerOptions: { ...strict, skipLibCheck: true, noEmit: true }, include: ['bad'] }, null, 2),
    );
  }, 600_000);

  afterAll(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it("the README's install lines are the ones that work: pack in the clone, install the file (the package is on no registry)", () => {
    const readme = readFileSync(join(sdkDir, 'README.md'), 'utf8');
    const section = readme.slice(
      readme.indexOf('## Install'),
      readme.indexOf('\n## ', readme.indexOf('## Install') + 1),
    );
    const commands = [...section.matchAll(/```bash\n([\s\S]*?)```/g)]
      .flatMap((m) => m[1].split('\n'))
      .filter((line) => line.trim() && !line.trim().startsWith('#'));
    expect(commands).toEqual(['npm run sdk:pack', `npm install /path/to/the/clone/${packedName}`]);
    expect(packedName).toBe(
      `affiliate-attribution-sdk-${JSON.parse(readFileSync(join(sdkDir, 'package.json'), 'utf8')).version}.tgz`,
    );
  });

  it('holds the build, README and licence only, and depends on no private package', async () => {
    const listing = await run('tar', ['-tzf', tarball], { cwd: work });
    expectSuccess(listing, 'tar');
    expect(listing.stdout.trim().split('\n').sort()).toEqual(
      [
        'package/LICENSE',
        'package/README.md',
        'package/dist/index.cjs',
        'package/dist/index.d.cts',
        'package/dist/index.d.ts',
        'package/dist/index.js',
        'package/dist/server.cjs',
        'package/dist/server.d.cts',
        'package/dist/server.d.ts',
        'package/dist/server.js',
        'package/package.json',
      ].sort(),
    );
    const manifest = JSON.parse(
      readFileSync(join(project, 'node_modules', '@affiliate-attribution', 'sdk', 'package.json'), 'utf8'),
    );
    // isbot: the same maintained bot list the service uses, for the server entry's referral capture.
    expect(Object.keys(manifest.dependencies).sort()).toEqual(['@ts-rest/core', 'isbot', 'zod']);
    for (const file of [
      'index.js',
      'index.cjs',
      'index.d.ts',
      'index.d.cts',
      'server.js',
      'server.cjs',
      'server.d.ts',
      'server.d.cts',
    ]) {
      const text = readFileSync(join(project, 'node_modules', '@affiliate-attribution', 'sdk', 'dist', file), 'utf8');
      expect(text, file).not.toContain('@affiliate-attribution/contract');
    }
  });

  it('compiles a strict ESM and a CommonJS backend file (library declarations checked too) and runs the flow against the server', async () => {
    const compiled = await run(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: project });
    expectSuccess(compiled, 'tsc');

    const { baseUrl } = await testServer();
    const merchant = await createMerchant();
    const env = { SVC_API_KEY: merchant.key, SVC_BASE_URL: baseUrl, SVC_REF: merchant.slug };

    const flow = await run(process.execPath, ['out/flow.js'], { cwd: project, env, timeoutMs: 60_000 });
    expectSuccess(flow, 'the ESM flow');
    expect(JSON.parse(flow.stdout.trim())).toEqual({
      organization: merchant.id,
      customerDeduped: false,
      kinds: ['initial', 'recurring'],
      resentDeduped: true,
      listed: 2,
      status: 'canceled',
      unknownReferral: 404,
    });

    const legacy = await run(process.execPath, ['out/legacy.cjs'], { cwd: project, env, timeoutMs: 60_000 });
    expectSuccess(legacy, 'the CommonJS file');
    expect(JSON.parse(legacy.stdout.trim())).toEqual({ organization: merchant.id, cjs: true, server: 'function' });

    const server = await run(process.execPath, ['out/server.js'], { cwd: project, env, timeoutMs: 60_000 });
    expectSuccess(server, 'the server entry');
    expect(JSON.parse(server.stdout.trim())).toEqual({
      middleware: true,
      readBack: true,
      snippet: true,
      fetchStyle: true,
    });
  }, 180_000);

  it('a wrong field name or type does not compile', async () => {
    const compiled = await run(process.execPath, [tsc, '-p', 'tsconfig.bad.json'], { cwd: project });
    expect(compiled.code).not.toBe(0);
    const errors = compiled.stdout.split('\n').filter((line) => line.includes('error TS'));
    expect(errors, compiled.stdout).toHaveLength(2);
    expect(errors[0]).toMatch(/wrong\.ts\(6,\d+\): error TS(2353|2561): .*'custmer_id'/);
    expect(errors[1]).toMatch(/wrong\.ts\(7,\d+\): error TS2322: Type 'string' is not assignable to type 'number'/);
  }, 120_000);
});
