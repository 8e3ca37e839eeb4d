// Shared lint rules: correctness checks that matter for a library whose
// background tasks must never crash the process.
import tseslint from 'typescript-eslint';

export default tseslint.config({ ignores: ['**/dist/**', '**/node_modules/**', '**/*.generated.ts'] }, ...tseslint.configs.recommended, {
  // Type information for the promise rules: a promise nobody awaits or catches is how a background task
  // crashes the process (an unhandled rejection), and an async callback handed to an API that ignores
  // its promise (EventEmitter, timers, Express) loses its errors the same way.
  languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: process.cwd() } },
  rules: {
    '@typescript-eslint/no-floating-promises': 'error',
    '@typescript-eslint/no-misused-promises': 'error',
    '@typescript-eslint/await-thenable': 'error',
    '@typescript-eslint/no-explicit-any': 'off',
    '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    'no-console': 'off',
    eqeqeq: ['error', 'smart'],
  },
});
