// ESLint's flat config: the recommended JavaScript and typescript-eslint sets over every source
// file, with the few rules this codebase answers differently configured here, each with its reason.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/dist/', 'coverage/', '.sst/', '.queen/', 'drizzle/', 'test/db/fixtures/'] },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    languageOptions: { ecmaVersion: 2023, sourceType: 'module', globals: { ...globals.node } },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // A leading `_` marks a parameter kept for its position, and `{ omitted: _, ...rest }` drops a key.
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', ignoreRestSiblings: true }],
      // Names, headers and ids are checked for control characters on purpose (docs/semantics.md#names-and-limits).
      'no-control-regex': 'off',
    },
  },
  {
    files: ['test/**', 'support/**', 'bench/**', 'cli/smoke.ts'],
    // These read the wire's JSON answers loosely; the assertion that follows is the type check.
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
