import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = dirname(fileURLToPath(import.meta.url));

/**
 * The dependency rules of design.md: for every folder of src/ (and strategies/), the folders its files may
 * import, whatever the depth of either file and whether the import is static, a re-export, an `import()` or an
 * `import('…')` type. A folder without a line here is an error too, so a new folder gets its rule when it is
 * made. A violation fails `npm run lint` (and so CI); test/lint/dependency-rules.test.ts feeds it forbidden
 * imports to prove it, and checks that the table itself allows no circle: every folder sits below the folders
 * that may import it, so no import can run back up. `errors` is src/errors.ts, the error base every ring may use.
 */
const BASE = ['market', 'ports', 'errors'];
const ADAPTER_BASE = [...BASE, 'ops', 'config'];
const RULES = {
  market: [],
  ports: ['market', 'errors'],
  errors: [],
  ops: BASE,
  strategy: BASE,
  // The charting library the pictures draw with (the backtest's reports, the dashboard).
  charts: [],
  // The exchange's wire protocol (its JSON's schemas, the signature), spoken by the HTTP venue, the simulated
  // exchange and the recordings alike.
  wire: BASE,
  clocks: [...BASE, 'ops'],
  config: [...BASE, 'ops', 'strategy', 'clocks'],
  // Adapters: never the engine, the read model, the operator layer or a composition root.
  store: ADAPTER_BASE,
  exchange: [...ADAPTER_BASE, 'clocks', 'wire'],
  record: [...ADAPTER_BASE, 'clocks', 'wire'],
  sim: [...ADAPTER_BASE, 'clocks', 'wire', 'record'],
  venues: [...ADAPTER_BASE, 'wire', 'sim', 'store'],
  // The engine knows the ports, the store (journal before send is SQLite by design) and the strategy API.
  engine: [...BASE, 'ops', 'config', 'store', 'strategy'],
  status: [...BASE, 'ops', 'store'],
  operator: [...BASE, 'ops', 'config', 'store', 'strategy', 'engine', 'status'],
  // Composition: the HTTP face and the notifier reach the bot through the operator layer, never app/ or cli/.
  // The API (routes, page, metrics) reads and acts through it alone: not the store, the read model or the engine.
  notify: [...BASE, 'ops', 'config', 'clocks', 'store', 'status', 'operator'],
  api: [...BASE, 'ops', 'config', 'charts', 'exchange', 'operator'],
  backtest: [...ADAPTER_BASE, 'charts', 'clocks', 'sim', 'venues', 'store', 'record', 'strategy', 'engine'],
  // A stand-in for the engine that strategies' own tests run on (the package's `spot-bot/testing`).
  testing: [...BASE, 'engine', 'wire', 'sim', 'strategy'],
};
const BELOW_APP = Object.keys(RULES);
/** The composition roots: the daemon knows every folder but the CLI; the CLI knows every folder. */
export const ALLOWED = { ...RULES, app: BELOW_APP, cli: [...BELOW_APP, 'app'] };

/**
 * The area of a file: a folder of src/ (any depth below it), a file directly in src/ (src/errors.ts is `errors`,
 * src/cli.ts belongs with cli/), or strategies/.
 */
function areaOf(file) {
  const rel = relative(ROOT, file).split(sep);
  if (rel[0] === 'strategies') return 'strategies';
  if (rel[0] !== 'src' || rel.length < 2) return undefined;
  if (rel.length === 2) return rel[1].replace(/\.[cm]?[jt]s$/, '');
  return rel[1];
}
const areaName = (area) => (area === 'errors' ? 'src/errors.ts' : `${area}/`);

const dependencyDirection = {
  meta: { type: 'problem', schema: [], messages: { forbidden: '{{message}}' } },
  create(context) {
    const file = context.filename;
    const from = areaOf(file);
    if (from === undefined) return {};
    const check = (node, source) => {
      if (source === undefined || !source.startsWith('.')) return;
      const target = resolve(dirname(file), source);
      const report = (message) => context.report({ node, messageId: 'forbidden', data: { message } });
      if (from === 'strategies') {
        const rel = relative(ROOT, target);
        if (
          !rel.startsWith(`strategies${sep}`) &&
          rel !== join('src', 'strategy', 'api.js') &&
          rel !== join('src', 'strategy', 'api.ts')
        )
          report(
            `a strategy imports only the strategy API (src/strategy/api.ts, or 'spot-bot/strategy') and zod, not ${source}`,
          );
        return;
      }
      const to = areaOf(target);
      if (to === undefined || to === from) return;
      const allowed = ALLOWED[from];
      if (allowed === undefined) {
        report(
          `${areaName(from)} has no dependency rule: add its line to ALLOWED in eslint.config.js (design.md's rings)`,
        );
        return;
      }
      if (!allowed.includes(to))
        report(
          `${areaName(from)} may not import ${areaName(to)} (${source}): dependencies point inward (design.md); ${areaName(from)} may import ${allowed.length === 0 ? 'nothing of the project' : allowed.map(areaName).join(', ')}`,
        );
    };
    const literal = (node) =>
      node?.type === 'Literal' && typeof node.value === 'string'
        ? node.value
        : node?.type === 'TemplateLiteral' && node.expressions.length === 0
          ? node.quasis[0].value.cooked
          : undefined;
    return {
      ImportDeclaration: (node) => check(node, literal(node.source)),
      ExportNamedDeclaration: (node) => check(node, literal(node.source)),
      ExportAllDeclaration: (node) => check(node, literal(node.source)),
      ImportExpression: (node) => check(node, literal(node.source)),
      TSImportType: (node) =>
        check(node, literal((node.source ?? node.argument)?.literal ?? node.source ?? node.argument)),
    };
  },
};

/** The methods of better-sqlite3's Database that run SQL or change the database. */
const SQL_METHODS = /^(prepare|exec|pragma|transaction|function|aggregate|table|backup|serialize|loadExtension)$/;

/**
 * No SQL outside the store: only store/ imports better-sqlite3 or calls a database's SQL methods (`db.prepare`,
 * `store.db.exec`, …). Everything else asks the store's own methods (issue 24's "no SQL outside the store").
 */
const sqlInStore = {
  meta: { type: 'problem', schema: [], messages: { sql: '{{message}}' } },
  create(context) {
    const from = areaOf(context.filename);
    if (from === undefined || from === 'store') return {};
    const report = (node, what) =>
      context.report({
        node,
        messageId: 'sql',
        data: { message: `${areaName(from)}: ${what}; SQL lives in store/ only, add a method there` },
      });
    const isDb = (node) =>
      (node.type === 'Identifier' && node.name === 'db') ||
      (node.type === 'MemberExpression' && !node.computed && node.property.name === 'db');
    const sqlite = (node) => {
      if (node.source?.value === 'better-sqlite3') report(node, 'better-sqlite3 imported');
    };
    return {
      ImportDeclaration: sqlite,
      ImportExpression: sqlite,
      MemberExpression: (node) => {
        if (!node.computed && SQL_METHODS.test(node.property.name ?? '') && isDb(node.object))
          report(node, `${node.property.name}() on a database`);
      },
    };
  },
};

/** The dependency rules as a config block (the lint probes use this one too). */
export const dependencyRules = {
  files: ['src/**/*.ts', 'strategies/**/*.ts'],
  plugins: { house: { rules: { 'dependency-direction': dependencyDirection, 'sql-in-store': sqlInStore } } },
  rules: { 'house/dependency-direction': 'error', 'house/sql-in-store': 'error' },
};

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
  dependencyRules,
  {
    files: ['eslint.config.js', 'bin/*.js'],
    ...tseslint.configs.disableTypeChecked,
    // bin/ runs on Node as it is (the launcher and the build that come before any TypeScript).
    languageOptions: {
      ...tseslint.configs.disableTypeChecked.languageOptions,
      globals: Object.fromEntries(['process', 'console', 'URL', 'performance'].map((g) => [g, 'readonly'])),
    },
  },
  {
    // The dashboard's scripts and the candle chart's (the page's and report.html's) run in the browser as they are.
    files: ['src/api/dashboard/**/*.js', 'src/charts/**/*.js'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      parserOptions: { projectService: false, project: null },
      sourceType: 'script',
      globals: Object.fromEntries(
        ['window', 'document', 'sessionStorage', 'fetch', 'setTimeout', 'clearTimeout', 'console', 'TextDecoder'].map(
          (g) => [g, 'readonly'],
        ),
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
