// stores: none — it reads test sources; its DATA_DIR is the text of a made-up tree's file
/**
 * Every test file that touches the store runs on both stores, or says why not: the PostgreSQL
 * pass of `make test` is built from the files themselves (test/support/stores.ts), and this
 * test fails on a file that opens a store without the switch and without a stated reason.
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { ROOT } from '../support/cli.js';
import { storeBindings, storeBoundFiles, storeViolations } from '../support/stores.js';

t.test('every store-bound test file runs on PostgreSQL or opts out with a reason', async (t) => {
  t.same(storeViolations(ROOT), [], 'no test file breaks the store rules');
  const bound = storeBoundFiles(ROOT);
  t.ok(bound.includes('test/http/products.test.ts'), 'an API test runs on both stores');
  t.ok(bound.includes('test/cli/cli.test.ts'), 'the CLI test runs on both stores');
  t.notOk(bound.includes('test/dashboard/browser.test.ts'), 'the browser test opted out');
  t.notOk(bound.includes('test/domain/money.test.ts'), 'a file without a store is not run twice');
  const optedOut = storeBindings(ROOT).filter((b) => b.reason !== undefined);
  t.ok(optedOut.length > 0);
  for (const b of optedOut) t.ok(b.reason!.length >= 10, `${b.file} says why: ${b.reason}`);
});

t.test("make test's PostgreSQL pass is the store-bound files, not a hand-kept list", async (t) => {
  const makefile = fs.readFileSync(path.join(ROOT, 'Makefile'), 'utf8');
  t.match(makefile, /--node=\d+\+AGENTSHELF_TEST_STORE=postgres(\+[A-Z_]+=\w+)*:@store-bound\s*$/m);
  t.notMatch(makefile, /TESTS_POSTGRES/);
});

t.test('the rule, on a tree of its own', async (t) => {
  const root = t.testdir({
    test: {
      support: {
        'store.ts': "export const TEST_STORE = 'sqlite';\n",
        'server.ts': "import { TEST_STORE } from './store.js';\nexport const s = TEST_STORE;\n",
        'clock.ts': 'export const now = 0;\n',
      },
      x: {
        'through-server.test.ts': "import { s } from '../support/server.js';\nexport { s };\n",
        'pure.test.ts': "import { now } from '../support/clock.js';\nexport { now };\n",
        'own-store.test.ts':
          "import { openStore } from '../../src/db/store.js';\nexport const o = openStore;\n",
        'dynamic.test.ts':
          "export const open = async () => (await import('../../src/db/migrate.js')).migrateToLatest;\n",
        'type-only.test.ts':
          "import type { Db } from '../../src/db/store.js';\nexport type D = Db;\n",
        'child-store.test.ts': "export const env = { DATA_DIR: '/tmp/x' };\n",
        'browser.test.ts':
          "// stores: sqlite-only — a browser test: Chromium clicks\n//   through the pages\nimport { s } from '../support/server.js';\nexport { s };\n",
        'no-reason.test.ts':
          "// stores: sqlite-only\nimport { openStore } from '../../src/db/store.js';\nexport const o = openStore;\n",
        'wrong-none.test.ts':
          "// stores: none — it says it opens nothing\nimport { s } from '../support/server.js';\nexport { s };\n",
      },
    },
  });
  const stores = Object.fromEntries(storeBindings(root).map((b) => [b.file, b.stores]));
  t.same(stores, {
    'test/x/browser.test.ts': 'sqlite-only',
    'test/x/child-store.test.ts': 'none',
    'test/x/dynamic.test.ts': 'none',
    'test/x/no-reason.test.ts': 'sqlite-only',
    'test/x/own-store.test.ts': 'none',
    'test/x/pure.test.ts': 'none',
    'test/x/through-server.test.ts': 'both',
    'test/x/type-only.test.ts': 'none',
    'test/x/wrong-none.test.ts': 'none',
  });
  t.same(storeBoundFiles(root), ['test/x/through-server.test.ts'], 'the PostgreSQL pass');
  t.same(
    storeBindings(root).find((b) => b.file === 'test/x/browser.test.ts')?.reason,
    'a browser test: Chromium clicks through the pages',
    'a reason may go on below its first line',
  );
  const violations = storeViolations(root);
  t.equal(violations.length, 5, violations.join('\n'));
  t.match(violations.join('\n'), /dynamic\.test\.ts: opens a store without .*src\/db\/migrate\.js/);
  t.match(violations.join('\n'), /child-store\.test\.ts: opens a store without/);
  t.match(violations.join('\n'), /own-store\.test\.ts: opens a store without/);
  t.match(
    violations.join('\n'),
    /no-reason\.test\.ts: its '\/\/ stores: sqlite-only' line states no reason/,
  );
  t.match(violations.join('\n'), /wrong-none\.test\.ts: says '\/\/ stores: none' but/);
});
