import http from 'node:http';
import { gunzipSync, brotliDecompressSync } from 'node:zlib';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { buildSnippet } from '../../server/src/snippet/build.js';
import { request } from '../support/api.js';
import { testServer } from '../support/server.js';

const SIZE_BUDGET_GZIP = 2048;

/** Raw HTTP (fetch would decompress, and adds Cache-Control: no-cache to conditional requests). */
async function fetchSnippet(headers: Record<string, string> = {}) {
  const { baseUrl } = await testServer();
  return new Promise<{ res: { status: number; headers: { get(name: string): string | null } }; body: Buffer }>((resolve, reject) => {
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
  });
}

describe('GET /snippet.js', () => {
  it(`is under ${SIZE_BUDGET_GZIP} bytes gzipped`, async () => {
    const snippet = await buildSnippet();
    console.log(`snippet.js: ${snippet.code.length} bytes minified, ${snippet.gzip.length} bytes gzipped, ${snippet.brotli.length} bytes brotli`);
    expect(snippet.gzip.length).toBeLessThan(SIZE_BUDGET_GZIP);
  });

  it('is served without an API key, as JavaScript, cacheable, with a strong ETag, to any origin', async () => {
    const { res, body } = await fetchSnippet({ 'accept-encoding': 'identity' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/javascript; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('public, max-age=3600, stale-while-revalidate=86400, stale-if-error=86400');
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
      build({ stdin: { contents: text, loader: 'js' }, write: false, target: 'es2017', supported: { 'async-await': true }, logLevel: 'silent' }),
    ).resolves.toBeDefined();
    expect(text).not.toMatch(/\?\.|\?\?|\*\*=|#[a-z]\w*\s*[=;(]/); // optional chaining, ??, private fields
    expect(text.startsWith('"use strict";(()=>{')).toBe(true);
  });
});
