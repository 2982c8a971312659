/**
 * `npm run build` (and so `npm start`): the server and the outbound-events worker as JavaScript
 * bundles, server/dist/main.mjs and server/dist/worker.mjs, so that production runs without a
 * TypeScript loader in the process (less memory, nothing transformed at run time), and the
 * tracking snippet compiled once, server/dist/snippet.js, which every instance serves as it is.
 * `--snippet` builds the snippet alone (`npm run dev`, which runs the TypeScript source directly).
 */
import { bundle } from './bundle.js';
import { writeSnippet } from './src/snippet/build.js';

await writeSnippet();
if (!process.argv.includes('--snippet')) {
  await bundle('server/src/main.ts', 'server/dist/main.mjs');
  await bundle('server/src/jobs/worker.ts', 'server/dist/worker.mjs');
}
