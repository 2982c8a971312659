// One linter for the whole repository: server, contract, client-sdk, openapi, web, test and bench.
// Type-aware (typescript-eslint's recommended-type-checked through the project service, so each
// file is checked with the tsconfig.json that compiles it: web/ with its own, the rest with the
// root one). Formatting is Prettier's alone: eslint-config-prettier turns off every rule it owns.
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import reactHooks from 'eslint-plugin-react-hooks';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    // Generated or built files, and what no tsconfig compiles.
    ignores: [
      '**/node_modules/**',
      '**/dist/**',
      '**/.data/**',
      '**/.tmp/**',
      'coverage/**',
      'web/.build-lock/**',
      'openapi/openapi.json',
      'test/openapi/generated/**',
    ],
  },
  {
    linterOptions: {
      // A disable comment that no longer silences anything is itself a finding.
      reportUnusedDisableDirectives: 'error',
    },
  },
  js.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      globals: { ...globals.node },
      parserOptions: {
        projectService: {
          // Configuration files and plain .mjs scripts that no tsconfig.json includes.
          allowDefaultProject: [
            '*.js',
            'vitest.config.ts',
            'client-sdk/tsup.config.ts',
            'server/node-version.mjs',
            'test/snippet/fixtures/*.mjs',
          ],
        },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      // Unused variables are errors; a leading underscore marks one that must stay (a position in
      // a signature, a rest sibling that removes a key).
      '@typescript-eslint/no-unused-vars': [
        'error',
        {
          args: 'after-used',
          argsIgnorePattern: '^_',
          varsIgnorePattern: '^_',
          caughtErrors: 'none',
          destructuredArrayIgnorePattern: '^_',
          ignoreRestSiblings: true,
        },
      ],
      // Express's handlers may return a promise: Express 4 ignores it and every async handler
      // here catches its own errors, so only the void-return check for attributes is relaxed.
      '@typescript-eslint/no-misused-promises': [
        'error',
        { checksVoidReturn: { arguments: false, attributes: false } },
      ],
      // A disable comment must say why.
      '@typescript-eslint/ban-ts-comment': ['error', { 'ts-expect-error': 'allow-with-description' }],
      // Off: an `async` function without `await` is how an implementation keeps a Promise-returning
      // signature (a migration's up(), a mailer's send, a stub handler); what matters, a promise
      // dropped or passed where none is expected, is no-floating-promises' and no-misused-promises'.
      '@typescript-eslint/require-await': 'off',
      // Cases grouped under one body, each with a comment of its own between them (url-guard.ts).
      'no-fallthrough': ['error', { allowEmptyCase: true }],
    },
  },
  {
    // Tests and benchmarks read HTTP answers and rows as untyped JSON on purpose: the body is what
    // is under test, asserted whole with toEqual/toMatchObject, and vitest's asymmetric matchers
    // (expect.any) are `any` by their own types. Typing them through the contract would assert
    // what the test is there to check. The server, contract, SDK, OpenAPI and web code keep
    // every no-unsafe-* rule.
    files: ['test/**/*.{ts,tsx,mts,mjs}', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      // expect(client.method) and vi.spyOn pass methods unbound to be inspected, never called.
      '@typescript-eslint/unbound-method': 'off',
    },
  },
  {
    // The readers of other services' JSON: the import sources (Rewardful, Tolt, FirstPromoter,
    // PartnerStack, Tapfiliate) and the payout rails (PayPal, Wise, Stripe). Their answers are
    // walked field by field with optional chaining, and every value is checked where it is used
    // (text(), typeof, Number.isFinite) rather than typed up front: a field the provider renames
    // or drops reads as absent. Each `any` is declared once, on a line that says so.
    files: [
      'server/src/modules/imports/sources/*.ts',
      'server/src/modules/payouts/rails/{paypal,wise,stripe}.ts',
      'server/src/modules/payout-settings/stripe-connect.ts',
    ],
    rules: {
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  {
    files: ['web/src/**/*.{ts,tsx}'],
    languageOptions: { globals: { ...globals.browser } },
    plugins: { 'react-hooks': reactHooks },
    rules: {
      'react-hooks/rules-of-hooks': 'error',
      'react-hooks/exhaustive-deps': 'error',
    },
  },
  {
    files: ['server/src/snippet/browser/**/*.ts'],
    languageOptions: { globals: { ...globals.browser } },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    extends: [tseslint.configs.disableTypeChecked],
  },
  prettier,
);
