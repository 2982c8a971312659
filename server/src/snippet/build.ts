import { createHash } from 'node:crypto';
import { brotliCompressSync, constants as zlib, gzipSync } from 'node:zlib';
import { fromRepoRoot } from '../paths.js';
import { build } from 'esbuild';

/** The snippet's TypeScript source, compiled for browsers at server start. */
export const SNIPPET_SOURCE = fromRepoRoot('server/src/snippet/browser/snippet.ts');

export interface BuiltSnippet {
  /** Minified ES2017 IIFE. */
  code: Buffer;
  gzip: Buffer;
  brotli: Buffer;
  /** Strong validator of the content, quoted as HTTP wants it. */
  etag: string;
}

/**
 * Compiles the snippet with esbuild: one dependency-free, minified ES2017 IIFE (runs in every
 * current Chromium, Firefox and Safari), precompressed once so that serving it costs nothing.
 */
export async function buildSnippet(): Promise<BuiltSnippet> {
  const result = await build({
    entryPoints: [SNIPPET_SOURCE],
    bundle: true,
    write: false,
    format: 'iife',
    platform: 'browser',
    target: 'es2017',
    minify: true,
    legalComments: 'none',
    charset: 'utf8',
    logLevel: 'silent',
  });
  const code = Buffer.from(result.outputFiles[0].contents);
  return {
    code,
    gzip: gzipSync(code, { level: 9 }),
    brotli: brotliCompressSync(code, { params: { [zlib.BROTLI_PARAM_QUALITY]: 11 } }),
    etag: `"${createHash('sha256').update(code).digest('base64url').slice(0, 27)}"`,
  };
}
