import { mkdir, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { build } from 'esbuild';
import { fromRepoRoot } from '../paths.js';
import { SNIPPET_ARTEFACT } from './artefact.js';

/**
 * Build time only (`npm run build`, server/build.ts; the tests' global setup): the service reads
 * the result (./artefact.ts) and never imports this file, so esbuild is not needed at run time.
 */
export const SNIPPET_SOURCE = fromRepoRoot('server/src/snippet/browser/snippet.ts');

/**
 * Compiles the snippet with esbuild: one dependency-free, minified ES2017 IIFE (runs in every
 * current Chromium, Firefox and Safari).
 */
export async function compileSnippet(): Promise<Buffer> {
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
  return Buffer.from(result.outputFiles[0].contents);
}

/** Compiles the snippet into the file the service serves (server/dist/snippet.js by default). */
export async function writeSnippet(outfile: string = SNIPPET_ARTEFACT): Promise<string> {
  const code = await compileSnippet();
  await mkdir(dirname(outfile), { recursive: true });
  // Written aside and renamed: a service starting meanwhile reads the old file or the new one, never half of one.
  const partial = `${outfile}.${process.pid}.tmp`;
  await writeFile(partial, code);
  await rename(partial, outfile);
  return outfile;
}
