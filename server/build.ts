/**
 * `npm run build` (and so `npm start`): the server as one JavaScript bundle, server/dist/main.mjs,
 * so that production runs without a TypeScript loader in the process (less memory, nothing
 * transformed at run time). `npm run dev` runs the TypeScript source directly instead.
 */
import { bundle } from './bundle.js';

await bundle('server/src/main.ts', 'server/dist/main.mjs');
