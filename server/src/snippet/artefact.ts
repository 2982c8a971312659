import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { brotliCompressSync, constants as zlib, gzipSync } from 'node:zlib';
import { fromRepoRoot } from '../paths.js';

/**
 * The snippet as `npm run build` compiled it (./build.ts): read by the service at start, so that no
 * instance compiles anything at boot and the service needs no compiler at run time.
 */
export const SNIPPET_ARTEFACT = fromRepoRoot('server/dist/snippet.js');

export interface BuiltSnippet {
  /** Minified ES2017 IIFE. */
  code: Buffer;
  gzip: Buffer;
  brotli: Buffer;
  /** Strong validator of the content, quoted as HTTP wants it. */
  etag: string;
}

/** The compiled code, precompressed once so that serving it costs nothing. */
export function prepareSnippet(code: Buffer): BuiltSnippet {
  return {
    code,
    gzip: gzipSync(code, { level: 9 }),
    brotli: brotliCompressSync(code, { params: { [zlib.BROTLI_PARAM_QUALITY]: 11 } }),
    etag: `"${createHash('sha256').update(code).digest('base64url').slice(0, 27)}"`,
  };
}

export class SnippetNotBuiltError extends Error {
  constructor(path: string) {
    super(`The tracking snippet is not built (${path} is missing): run \`npm run build\` (npm start does it).`);
  }
}

/** The built snippet, read from `path`; a SnippetNotBuiltError when the build has not run. */
export async function loadSnippet(path: string = SNIPPET_ARTEFACT): Promise<BuiltSnippet> {
  try {
    return prepareSnippet(await readFile(path));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new SnippetNotBuiltError(path);
    throw err;
  }
}
