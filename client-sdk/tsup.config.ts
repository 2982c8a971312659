import { defineConfig } from 'tsup';

// The contract package is private: its code and types are bundled into the SDK, so the published
// package depends only on what the contract itself needs (@ts-rest/core and zod, whose types the
// declarations reference).
export default defineConfig({
  entry: { index: 'src/index.ts', server: 'src/server/index.ts' },
  format: ['esm', 'cjs'],
  target: 'node20',
  platform: 'node',
  tsconfig: 'tsconfig.build.json',
  dts: { resolve: ['@affiliate-attribution/contract'] },
  noExternal: ['@affiliate-attribution/contract'],
  external: ['@ts-rest/core', 'zod', 'isbot'],
  splitting: false,
  sourcemap: false,
  clean: true,
  treeshake: true,
});
