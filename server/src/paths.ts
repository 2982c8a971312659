import { fileURLToPath } from 'node:url';

/**
 * A path from the repository root. This file sits two levels below the root
 * (server/src/paths.ts), exactly as the production bundle does (server/dist/main.mjs, see
 * server/build.ts), so the same relative URL holds whether the server runs from source or bundled.
 */
export const fromRepoRoot = (relative: string): string => fileURLToPath(new URL(`../../${relative}`, import.meta.url));
