import { spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = fileURLToPath(new URL('../../../', import.meta.url));

/**
 * The SDK built as its package is (client-sdk's tsup configuration and package.json exports),
 * into a directory of its own inside node_modules/.cache: a merchant app there imports
 * `@affiliate-attribution/sdk/server` by name and gets the built files, while its dependencies
 * (zod, isbot, express...) resolve from the repository's node_modules. JavaScript only: the
 * declarations are the tarball test's business, and they take a minute and a half to build.
 */
export interface BuiltSdk {
  root: string;
  remove(): void;
}

export async function buildSdkPackage(): Promise<BuiltSdk> {
  mkdirSync(join(repo, 'node_modules/.cache'), { recursive: true });
  const root = mkdtempSync(join(repo, 'node_modules/.cache/sdk-e2e-'));
  const pkg = join(root, 'node_modules/@affiliate-attribution/sdk');
  mkdirSync(pkg, { recursive: true });
  copyFileSync(join(repo, 'client-sdk/package.json'), join(pkg, 'package.json'));
  const built = await run(
    process.execPath,
    [join(repo, 'node_modules/tsup/dist/cli-default.js'), '--out-dir', join(pkg, 'dist'), '--no-dts', '--silent'],
    join(repo, 'client-sdk'),
  );
  if (built.code !== 0) throw new Error(`SDK build failed:\n${built.output}`);
  copyFileSync(fileURLToPath(new URL('../fixtures/merchant-app.mjs', import.meta.url)), join(root, 'merchant-app.mjs'));
  return { root, remove: () => rmSync(root, { recursive: true, force: true }) };
}

function run(command: string, args: string[], cwd: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NODE_OPTIONS: '' },
    });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

export interface MerchantApp {
  /** http://localhost:<port>: a site of its own, while the service is http://127.0.0.1:<port>. */
  origin: string;
  stop(): Promise<void>;
}

export interface MerchantAppEnv {
  SVC_BASE_URL: string;
  SVC_API_KEY: string;
  SVC_ORGANIZATION: string;
  /** `middleware`: the referral middleware on every page; `proxy`: the snippet through /_aff on the landing page. */
  SVC_MODE?: 'middleware' | 'proxy';
  SVC_TIMEOUT_MS?: string;
  /** The address the merchant's server calls the service from. */
  SVC_LOCAL_ADDRESS?: string;
  SVC_PROXY_WITHOUT_KEY?: string;
}

/** Starts the merchant app (test/snippet/fixtures/merchant-app.mjs) in a process of its own. */
export function startMerchantApp(sdk: BuiltSdk, env: MerchantAppEnv): Promise<MerchantApp> {
  return new Promise((resolve, reject) => {
    const child: ChildProcess = spawn(process.execPath, ['merchant-app.mjs'], {
      cwd: sdk.root,
      env: { ...process.env, NODE_OPTIONS: '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    let stdout = '';
    child.stderr!.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('exit', (code) => reject(new Error(`merchant app exited (${code}):\n${stderr}`)));
    child.stdout!.on('data', (d) => {
      stdout += d;
      const line = stdout.split('\n')[0];
      if (!stdout.includes('\n')) return;
      const { port } = JSON.parse(line) as { port: number };
      resolve({
        origin: `http://localhost:${port}`,
        stop: () =>
          new Promise<void>((done) => {
            if (child.exitCode !== null) return done();
            child.once('exit', () => done());
            child.kill('SIGTERM');
            setTimeout(() => child.kill('SIGKILL'), 2_000).unref();
          }),
      });
    });
  });
}

/** A service that accepts connections and never answers: the slowest service there is. */
export async function startSilentService(): Promise<{ baseUrl: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
