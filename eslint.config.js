import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * The arrows point down: http -> domain -> db, and only the composition root (main.ts,
 * server.ts, cli/) starts the pipeline. test/lint/boundaries.test.ts checks that these rules
 * catch a bad import.
 */
const noHttp = {
  group: ['**/http/**', '**/http/*'],
  message: 'db/ and domain/ never import http/ (data flows http -> domain -> db).',
};
const noPipeline = {
  group: ['**/pipeline/**', '**/pipeline/*'],
  message: 'Only the composition root (src/main.ts, src/server.ts, src/cli/) imports pipeline/.',
};
const noDomain = {
  group: ['**/domain/**', '**/domain/*'],
  message: 'db/ never imports domain/: the store knows rows, not rules.',
};

const noPlatforms = {
  group: ['**/platforms/**', '**/platforms/*'],
  message:
    'The platform adapters (src/platforms/) are plugged in by the composition root (src/server.ts, src/cli/): the domain sees them only through domain/integrations/source.ts.',
};
const noDashboard = {
  group: ['**/dashboard/**', '**/dashboard/*'],
  message: 'Only the composition root mounts the dashboard (src/dashboard/).',
};
/** The floor of shared helpers (net/, runtime/, errors, config, ids, logger): it imports no room above it. */
const noRooms = {
  group: [
    '**/domain/**',
    '**/domain/*',
    '**/db/**',
    '**/db/*',
    '**/http/**',
    '**/http/*',
    '**/dashboard/**',
    '**/dashboard/*',
    '**/platforms/**',
    '**/platforms/*',
    '**/pipeline/**',
    '**/pipeline/*',
  ],
  message:
    'net/ and runtime/ are the ground floor: they import no room above them (domain, db, http, dashboard, platforms, pipeline).',
};
const noDashboardApp = {
  group: ['../app.js', '**/dashboard/app.js'],
  message:
    'A dashboard page takes what it needs from dashboard/route.ts; dashboard/app.ts imports the pages, never the reverse.',
};

/**
 * Database drivers and dialects stay behind the store seam (src/db/store.ts): outside src/db/
 * code asks the Store for connections and dialectOf(db) for SQL that differs.
 */
const driverMessage =
  'Only src/db/ talks to a database driver or builds a dialect: use the Store (db/store.ts), db/queries/, or dialectOf(db).';
const noDrivers = [
  { name: 'better-sqlite3', message: driverMessage },
  { name: 'pg', message: driverMessage },
  {
    name: 'kysely',
    importNames: ['SqliteDialect', 'SqliteDriver', 'PostgresDialect', 'PostgresDriver'],
    message: driverMessage,
  },
];
const noDriverPaths = {
  group: ['better-sqlite3/*', 'pg/*', 'pg-*'],
  message: driverMessage,
};

/**
 * The domain validates; how the wire shows a schema (OpenAPI descriptions, component ids)
 * and how a query string's text becomes numbers belong to src/http/schemas.
 * test/lint/domain-schemas.test.ts checks that these are caught.
 */
const wireConcernsInDomain = [
  {
    selector: "CallExpression[callee.property.name='meta']",
    message:
      'OpenAPI metadata lives in src/http/schemas (doc/docFields on apiDocs), not on domain schemas.',
  },
  {
    selector: "CallExpression[callee.property.name='describe']",
    message:
      'OpenAPI descriptions live in src/http/schemas (doc/docFields on apiDocs), not on domain schemas.',
  },
  {
    selector: "MemberExpression[property.name='coerce']",
    message:
      'Query-string coercion lives in src/http/schemas (pageQuery); the domain takes numbers.',
  },
];

/**
 * Landed migrations are frozen (src/db/migrations/manifest.json, test/db/migrations.test.ts):
 * each carries its own SQL per dialect, so nothing it imports can change the schema it makes.
 * A migration imports kysely and files of its own folder, nothing else.
 */
const migrationImports = {
  regex: '^(?!kysely(/|$)|\\./[^/]+$)',
  message:
    'A migration imports only kysely and its own folder: it carries its own SQL per dialect, frozen once landed (copy what it needs from src/ into it).',
};

export const boundaries = [
  {
    files: ['src/db/**/*.ts'],
    ignores: ['src/db/migrations/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [noHttp, noPipeline, noDomain, noPlatforms, noDashboard] },
      ],
    },
  },
  {
    files: ['src/db/migrations/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [migrationImports] }] },
  },
  {
    files: ['src/domain/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: noDrivers,
          patterns: [noHttp, noPipeline, noDriverPaths, noPlatforms, noDashboard],
        },
      ],
      'no-restricted-syntax': ['error', ...wireConcernsInDomain],
    },
  },
  {
    files: ['src/**/*.ts'],
    ignores: [
      'src/main.ts',
      'src/server.ts',
      'src/cli/**',
      'src/db/**',
      'src/domain/**',
      'src/net/**',
      'src/runtime/**',
      'src/dashboard/pages/**',
    ],
    rules: {
      'no-restricted-imports': [
        'error',
        { paths: noDrivers, patterns: [noPipeline, noDriverPaths, noPlatforms] },
      ],
    },
  },
  {
    files: ['src/http/**/*.ts', 'src/platforms/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { paths: noDrivers, patterns: [noPipeline, noDriverPaths, noPlatforms, noDashboard] },
      ],
    },
  },
  {
    files: ['src/dashboard/pages/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { paths: noDrivers, patterns: [noPipeline, noDriverPaths, noPlatforms, noDashboardApp] },
      ],
    },
  },
  {
    files: ['src/net/**/*.ts', 'src/runtime/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { paths: noDrivers, patterns: [noRooms] }] },
  },
  {
    files: ['src/main.ts', 'src/server.ts', 'src/cli/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { paths: noDrivers, patterns: [noDriverPaths] }] },
  },
  {
    files: ['pipeline/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: noDrivers,
          patterns: [
            noDriverPaths,
            noPlatforms,
            noDashboard,
            {
              group: ['**/src/http/**', '**/src/http/*'],
              message:
                'pipeline/ writes what the servers serve; the wire policy it shares with them lives in src/domain/discovery/policy.ts, below both.',
            },
          ],
        },
      ],
    },
  },
];

export default tseslint.config(
  {
    ignores: [
      'build/',
      'dist/',
      'data/',
      'public/',
      '.tap/',
      'node_modules/',
      'bench/.work/',
      '.runtime/',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      'no-console': 'off',
    },
  },
  {
    // Tests read response bodies of many shapes; `any` keeps assertions readable there.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  ...boundaries,
);
