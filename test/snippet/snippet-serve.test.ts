import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express from 'express';
import { gunzipSync, brotliDecompressSync } from 'node:zlib';
import { build } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';
import { prepareSnippet } from '../../server/src/snippet/artefact.js';
import { compileSnippet } from '../../server/src/snippet/build.js';
import { request } from '../support/api.js';
import { testServer } from '../support/server.js';
import { bundle } from '../../server/bundle.js';
import { unresolvableHook } from '../deploy/support.js';
import { SNIPPET_ARTEFACT } from '../../server/src/snippet/artefact.js';
import { snippetHandler } from '../../server/src/snippet/serve.js';
import { fromRepoRoot } from '../../server/src/paths.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import {
  describeWithPostgres,
  startService,
  stopService,
  type ServiceProcess,
} from '../reliability/support/service.js';

const SIZE_BUDGET_GZIP = 2048;

/** What `npm run build` compiles from the snippet's source now. */
const buildSnippet = async () => prepareSnippet(await compileSnippet());

/** Raw HTTP (fetch would decompress, and adds Cache-Control: no-cache to conditional requests). */
async function fetchSnippet(headers: Record<string, string> = {}) {
  const { baseUrl } = await testServer();
  return new Promise<{ res: { status: number; headers: { get(name: string): string | null } }; body: Buffer }>(
    (resolve, reject) => {
      http
        .get(`${baseUrl}/snippet.js`, { headers }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const get = (name: string) => {
              const v = res.headers[name.toLowerCase()];
              return v === undefined ? null : String(v);
            };
            resolve({ res: { status: res.statusCode ?? 0, headers: { get } }, body: Buffer.concat(chunks) });
          });
        })
        .on('error', reject);
    },
  );
}

describe('GET /snippet.js', () => {
  it(`is under ${SIZE_BUDGET_GZIP} bytes gzipped`, async () => {
    const snippet = await buildSnippet();
    console.log(
      `snippet.js: ${snippet.code.length} bytes minified, ${snippet.gzip.length} bytes gzipped, ${snippet.brotli.length} bytes brotli`,
    );
    expect(snippet.gzip.length).toBeLessThan(SIZE_BUDGET_GZIP);
  });

  it('is served without an API key, as JavaScript, cacheable, with a strong ETag, to any origin', async () => {
    const { res, body } = await fetchSnippet({ 'accept-encoding': 'identity' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/javascript; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe(
      'public, max-age=3600, stale-while-revalidate=86400, stale-if-error=86400',
    );
    expect(res.headers.get('etag')).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('content-encoding')).toBeNull();
    expect(body.equals((await buildSnippet()).code)).toBe(true);
  });

  it('answers 304 to a matching If-None-Match', async () => {
    const first = await fetchSnippet();
    const etag = first.res.headers.get('etag')!;
    const again = await fetchSnippet({ 'if-none-match': etag });
    expect(again.res.status).toBe(304);
    expect(again.body.length).toBe(0);
    expect((await fetchSnippet({ 'if-none-match': '"other"' })).res.status).toBe(200);
  });

  it('is precompressed with gzip and Brotli per Accept-Encoding', async () => {
    const code = (await buildSnippet()).code;
    const gz = await fetchSnippet({ 'accept-encoding': 'gzip' });
    expect(gz.res.headers.get('content-encoding')).toBe('gzip');
    expect(gz.res.headers.get('vary')).toBe('Accept-Encoding');
    expect(gunzipSync(gz.body).equals(code)).toBe(true);
    const br = await fetchSnippet({ 'accept-encoding': 'br, gzip' });
    expect(br.res.headers.get('content-encoding')).toBe('br');
    expect(brotliDecompressSync(br.body).equals(code)).toBe(true);
  });

  it('HEAD answers the headers only', async () => {
    const res = await request('HEAD', '/snippet.js');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('javascript');
  });

  it('is a self-contained ES2017 script: no imports, nothing newer than ES2017', async () => {
    const { code } = await buildSnippet();
    const text = code.toString();
    expect(text).not.toMatch(/\bimport\s*[({'"]|\brequire\(/);
    // esbuild refuses to lower syntax it cannot express in the target: a rebuild targeting
    // ES2017 from the output must leave it unchanged in meaning and succeed.
    await expect(
      build({
        stdin: { contents: text, loader: 'js' },
        write: false,
        target: 'es2017',
        supported: { 'async-await': true },
        logLevel: 'silent',
      }),
    ).resolves.toBeDefined();
    expect(text).not.toMatch(/\?\.|\?\?|\*\*=|#[a-z]\w*\s*[=;(]/); // optional chaining, ??, private fields
    expect(text.startsWith('"use strict";(()=>{')).toBe(true);
  });
});

describe('the snippet is compiled once, by `npm run build`', () => {
  it('the service serves the file the build wrote (server/dist/snippet.js), byte for byte', async () => {
    const { res, body } = await fetchSnippet({ 'accept-encoding': 'identity' });
    expect(res.status).toBe(200);
    expect(body.equals(readFileSync(SNIPPET_ARTEFACT))).toBe(true);
  });

  it('not built: GET /snippet.js answers 503 saying how to build it (never compiles it)', async () => {
    const app = express().get('/snippet.js', snippetHandler(join(tmpdir(), 'aa-no-such-snippet.js')));
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const res = await fetch(`http://127.0.0.1:${(server.address() as { port: number }).port}/snippet.js`);
      expect(res.status).toBe(503);
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(await res.json()).toEqual({
        success: false,
        message: `The tracking snippet is not built (${join(tmpdir(), 'aa-no-such-snippet.js')} is missing): run \`npm run build\` (npm start does it).`,
      });
    } finally {
      server.close();
    }
  });
});

describeWithPostgres('the built service runs without esbuild', () => {
  let db: TestDatabase | undefined;
  let service: ServiceProcess | undefined;
  const dir = mkdtempSync(join(tmpdir(), 'aa-no-esbuild-'));
  // Beside server/dist/main.mjs, as the build writes it (paths are relative to that depth), under a name of its own.
  const script = fromRepoRoot(`server/dist/no-esbuild-${process.pid}.mjs`);
  afterAll(async () => {
    await stopService(service);
    await db?.stop();
    rmSync(dir, { recursive: true, force: true });
    rmSync(script, { force: true });
    rmSync(`${script}.map`, { force: true });
  });

  it(
    'started with esbuild unresolvable, it serves the snippet `npm run build` compiled',
    { timeout: 180_000 },
    async () => {
      await bundle('server/src/main.ts', script);
      // Any import of esbuild (or tsx) by the running service fails, as on a host where only what runs is installed.
      const hook = unresolvableHook(dir);
      db = await createTestDatabase();
      service = await startService(db.url, {}, ['--import', hook, script]);
      const res = await fetch(`${service.url}/snippet.js`, { headers: { 'accept-encoding': 'identity' } });
      expect(res.status).toBe(200);
      expect(Buffer.from(await res.arrayBuffer()).equals(readFileSync(SNIPPET_ARTEFACT))).toBe(true);
    },
  );
});
