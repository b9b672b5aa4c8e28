// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * Lint rules: the recommended sets of ESLint and typescript-eslint (syntax only, no type
 * information, so a run stays fast), plus the few rules this codebase relies on. Formatting is
 * Prettier's job (`npm run format`), never a lint rule.
 */
export default tseslint.config(
  { ignores: ['dist/', 'dist.next/', 'dist.old/', 'node_modules/', 'tap-snapshots/', '.tap/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        Buffer: 'readonly',
        URL: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        setImmediate: 'readonly',
        queueMicrotask: 'readonly',
        structuredClone: 'readonly',
        AbortController: 'readonly',
        AbortSignal: 'readonly',
        fetch: 'readonly',
        Response: 'readonly',
        Request: 'readonly',
        Headers: 'readonly',
        TextEncoder: 'readonly',
        TextDecoder: 'readonly',
      },
    },
    rules: {
      // Unused names are dead code; a leading underscore marks one kept on purpose.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
      '@typescript-eslint/consistent-type-imports': [
        'error',
        { fixStyle: 'inline-type-imports', disallowTypeAnnotations: false },
      ],
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      'no-console': 'off',
      // The TUI and the tests of terminal output match control characters and runs of spaces on
      // purpose: a regex that reads like the output it matches is the clearer one.
      'no-control-regex': 'off',
      'no-regex-spaces': 'off',
    },
  },
);
