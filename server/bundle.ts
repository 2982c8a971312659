import { build } from 'esbuild';

/**
 * Bundles an entry point and the workspace packages it imports (the contract is TypeScript
 * source) into one plain JavaScript ES module; npm packages stay external, loaded from
 * node_modules. Used by `npm run build` (server/build.ts) and by the benchmark.
 */
export async function bundle(entry: string, outfile: string): Promise<string> {
  await build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    sourcemap: 'linked',
    logLevel: 'warning',
    plugins: [
      {
        name: 'external-npm-packages',
        setup(b) {
          // Bare imports are npm packages (external) unless they are this repository's workspaces.
          b.onResolve({ filter: /^[^./]/ }, (args) =>
            args.path.startsWith('@affiliate-attribution/') ? undefined : { path: args.path, external: true },
          );
        },
      },
    ],
  });
  return outfile;
}
