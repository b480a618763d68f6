import path from 'node:path';
import { ESLint } from 'eslint';
import t from 'tap';
import { ROOT } from '../support/cli.js';

// The project's own ESLint configuration, asked about files that do not exist in the tree.
const eslint = new ESLint({ cwd: ROOT });

async function restrictedImports(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: path.join(ROOT, file) });
  return result!.messages.filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

t.test('domain/ importing http/ is refused by the lint step', async (t) => {
  const messages = await restrictedImports(
    'src/domain/products/bad-example.ts',
    "import { createApp } from '../../http/app.js';\nexport const app = createApp;\n",
  );
  t.equal(messages.length, 1);
  t.match(messages[0], /never import http/);
});

t.test('db/ importing domain/ or http/ is refused by the lint step', async (t) => {
  const fromDomain = await restrictedImports(
    'src/db/queries/bad-example.ts',
    "import { toMinorUnits } from '../../domain/money.js';\nexport const f = toMinorUnits;\n",
  );
  t.match(fromDomain[0], /never imports domain/);
  const fromHttp = await restrictedImports(
    'src/db/bad-example.ts',
    "import type { AppDeps } from '../http/route.js';\nexport type D = AppDeps;\n",
  );
  t.match(fromHttp[0], /never import http/);
});

t.test('pipeline/ is imported only by the composition root', async (t) => {
  const code =
    "import { runPipeline } from '../../pipeline/run.js';\nexport const r = runPipeline;\n";
  t.equal((await restrictedImports('src/http/bad-example.ts', code)).length, 1, 'http/ refused');
  t.equal((await restrictedImports('src/cli/bad-example.ts', code)).length, 0, 'cli/ allowed');
  t.equal(
    (await restrictedImports('src/bad-example.ts', "import '../pipeline/run.js';\n")).length,
    1,
    'another root file refused',
  );
});

t.test('downward imports pass', async (t) => {
  const messages = await restrictedImports(
    'src/http/routes/bad-example.ts',
    "import { toMinorUnits } from '../../domain/money.js';\nexport const f = toMinorUnits;\n",
  );
  t.same(messages, []);
});

t.test('database drivers and dialects are imported only inside src/db/', async (t) => {
  const sqlite =
    "import SQLite from 'better-sqlite3';\nexport const open = (f: string) => new SQLite(f);\n";
  const dialect = "import { SqliteDialect } from 'kysely';\nexport const D = SqliteDialect;\n";
  const pg = "import pg from 'pg';\nexport const Pool = pg.Pool;\n";
  for (const file of [
    'pipeline/bad-example.ts',
    'src/domain/audit/bad-example.ts',
    'src/http/bad-example.ts',
    'src/cli/bad-example.ts',
  ]) {
    for (const [what, code] of [
      ['better-sqlite3', sqlite],
      ['SqliteDialect', dialect],
      ['pg', pg],
    ] as const) {
      const messages = await restrictedImports(file, code);
      t.equal(messages.length, 1, `${what} in ${file} is refused`);
      t.match(messages[0], /Only src\/db\/ talks to a database driver/);
    }
  }
  t.same(
    await restrictedImports(
      'src/domain/bad-example.ts',
      "import { sql, type Kysely } from 'kysely';\nexport type K = Kysely<object>;\nexport const s = sql;\n",
    ),
    [],
    "kysely's query builder stays open to everyone",
  );
  t.same(
    await restrictedImports('src/db/sqlite/bad-example.ts', sqlite + dialect),
    [],
    'src/db/ may',
  );
});

t.test('the platform adapters are plugged in by the composition root only', async (t) => {
  const code =
    "import { platformSources } from '../../platforms/index.js';\nexport const p = platformSources;\n";
  for (const file of [
    'src/domain/integrations/bad-example.ts',
    'src/http/routes/bad-example.ts',
    'src/db/queries/bad-example.ts',
  ]) {
    const messages = await restrictedImports(file, code);
    t.equal(messages.length, 1, `${file} refused`);
    t.match(messages[0], /composition root/);
  }
  t.same(
    await restrictedImports(
      'src/cli/bad-example.ts',
      "import { platformSources } from '../platforms/index.js';\nexport const p = platformSources;\n",
    ),
    [],
    'cli/ allowed',
  );
});

t.test('net/ and runtime/ import no room above them', async (t) => {
  for (const [file, code] of [
    [
      'src/net/bad-example.ts',
      "import { parseRetryAfter } from '../domain/webhooks/sender.js';\nexport const p = parseRetryAfter;\n",
    ],
    [
      'src/runtime/bad-example.ts',
      "import { openStore } from '../db/store.js';\nexport const o = openStore;\n",
    ],
  ] as const) {
    const messages = await restrictedImports(file, code);
    t.equal(messages.length, 1, `${file} refused`);
    t.match(messages[0], /ground floor/);
  }
});

t.test('pipeline/ never imports http/: the wire policy it shares sits below both', async (t) => {
  const messages = await restrictedImports(
    'pipeline/discovery/bad-example.ts',
    "import { startDiscoveryServer } from '../../src/http/discovery/server.js';\nexport const s = startDiscoveryServer;\n",
  );
  t.equal(messages.length, 1);
  t.match(messages[0], /below both/);
});

t.test('a dashboard page never imports dashboard/app.ts', async (t) => {
  const messages = await restrictedImports(
    'src/dashboard/pages/bad-example.ts',
    "import { createDashboard } from '../app.js';\nexport const c = createDashboard;\n",
  );
  t.equal(messages.length, 1);
  t.match(messages[0], /dashboard\/route\.ts/);
});
t.test('a migration imports only kysely and its own folder', async (t) => {
  const file = 'src/db/migrations/29991231000000_bad_example.ts';
  const fromSrc = await restrictedImports(
    file,
    "import { dialectOf } from '../dialect.js';\nexport const d = dialectOf;\n",
  );
  t.equal(fromSrc.length, 1, 'src/db/dialect.ts refused');
  t.match(fromSrc[0], /carries its own SQL per dialect/);
  t.equal(
    (await restrictedImports(file, "import pg from 'pg';\nexport const p = pg;\n")).length,
    1,
    'another package refused',
  );
  t.same(
    await restrictedImports(
      file,
      "import { type Kysely, PostgresAdapter, sql } from 'kysely';\nexport type K = Kysely<unknown>;\nexport const a = [PostgresAdapter, sql];\n",
    ),
    [],
    'kysely allowed',
  );
  t.same(
    await restrictedImports(
      'src/db/migrations/index.ts',
      "import * as m from './20261121000000_initial.js';\nexport const all = { m };\n",
    ),
    [],
    'its own folder allowed',
  );
});
