import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * The dependency rules of design.md, one entry per ring: which folders a folder's files may not import.
 * A violation fails `npm run lint` (and so CI). Imports are relative, so each rule names the sibling
 * folders as `../name/*`.
 */
const folders = (...names) => names.flatMap((n) => [`../${n}/*`, `../${n}`]);
const forbid = (files, groups, message) => ({
  files,
  rules: { 'no-restricted-imports': ['error', { patterns: [{ group: groups, message }] }] },
});
const ADAPTERS = ['clocks', 'exchange', 'sim', 'venues', 'store', 'record'];
const COMPOSITION = ['app', 'cli', 'backtest', 'api', 'notify'];
const dependencyRules = [
  forbid(
    ['src/market/**/*.ts'],
    ['../*', '../**'],
    'market/ is the innermost ring: it imports nothing of the project.',
  ),
  forbid(
    ['src/ports/**/*.ts'],
    ['../*', '../**', '!../market/*', '!../errors.js'],
    'ports/ imports only market/ (and the error base in src/errors.ts).',
  ),
  forbid(
    ['src/engine/**/*.ts'],
    folders('exchange', 'sim', 'venues', 'record', 'status', ...COMPOSITION),
    'engine/ knows the ports, never an adapter or the composition root (design.md).',
  ),
  forbid(
    ADAPTERS.map((a) => `src/${a}/**/*.ts`),
    folders('engine', 'status', ...COMPOSITION),
    'adapters never import the engine or the composition root (design.md).',
  ),
  forbid(
    ['src/status/**/*.ts'],
    folders('engine', 'exchange', 'sim', 'venues', 'record', ...COMPOSITION),
    'status/ is the read model over the store: the CLI, the API and the page read it without the engine.',
  ),
  forbid(
    ['src/strategy/**/*.ts'],
    folders('engine', ...ADAPTERS, 'status', ...COMPOSITION),
    'the strategy API depends on nothing that runs strategies.',
  ),
  forbid(
    ['strategies/**/*.ts'],
    ['../*', '../**', '!../src', '!../src/strategy', '!../src/strategy/api.js'],
    'a strategy imports only the strategy API (src/strategy/api.ts) and zod.',
  ),
];

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/', '.tmp/', 'data/', 'out/', 'backtests/', 'src/backtest/vendor/'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // A daemon that loses a promise loses an order: these two are the ones that matter most here.
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': 'off',
    },
  },
  ...dependencyRules,
  {
    files: ['eslint.config.js', 'bin/*.js'],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    // The dashboard's script runs in the browser as it is (no build step).
    files: ['src/api/dashboard/**/*.js'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      parserOptions: { projectService: false, project: null },
      sourceType: 'script',
      globals: Object.fromEntries(
        ['window', 'document', 'sessionStorage', 'fetch', 'setTimeout', 'clearTimeout', 'console'].map((g) => [
          g,
          'readonly',
        ]),
      ),
    },
  },
  {
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/unbound-method': 'off',
    },
  },
);
