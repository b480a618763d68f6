/**
 * Which test files run on which store, decided from the files themselves (as Kysely runs its
 * suite on every dialect): no hand-kept list.
 *
 * - A file is **store-bound** when its imports (followed through test/) reach
 *   test/support/store.ts, the one switch between the stores (AGENTSHELF_TEST_STORE): the
 *   PostgreSQL pass of `make test` runs every store-bound file
 *   (`--node=24+AGENTSHELF_TEST_STORE=postgres+TAP_JOBS=2:@store-bound`,
 *   test/support/run-tests.ts).
 * - A file opts out with a comment among its first lines, and a reason (which may go on in
 *   the comment lines right below it, indented):
 *     // stores: sqlite-only — a browser test: ...      (touches the store, SQLite alone)
 *     // stores: none — ...                             (looks as if it did, opens no store)
 * - A file that opens a store some other way (a value import of src/db/store.js or
 *   src/db/migrate.js, or a DATA_DIR given to a child or a config) without reaching
 *   test/support/store.ts and without an opt-out is a **violation**: it would run on SQLite
 *   alone unnoticed. test/lint/stores.test.ts fails on one.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';

export type Stores = 'both' | 'sqlite-only' | 'none';

export interface StoreBinding {
  /** test/x/y.test.ts, relative to the root. */
  file: string;
  /** both: store-bound, run on SQLite and PostgreSQL; sqlite-only, none: opted out. */
  stores: Stores;
  /** The opt-out's reason, as the file states it (undefined: the file did not opt out). */
  reason?: string;
  /** Why the file looks as if it touched a store without the switch (empty when it does not). */
  ownStore: string[];
  /** Its imports reach test/support/store.ts. */
  switched: boolean;
}

/** The switch between the stores. */
const SWITCH = 'test/support/store.ts';
/**
 * `// stores: sqlite-only — reason` (an em dash, a hyphen or a colon before the reason), and
 * the reason's `//   ` continuation lines.
 */
const OPT_OUT =
  /^\/\/ stores: (sqlite-only|none)\b[ \t]*(?:—|--|-|:)?[ \t]*(.*(?:\n\/\/ {2,}.*)*)$/m;
/** How far down a file the opt-out may stand (its first lines: before or among the imports). */
const HEADER_LINES = 40;

function relativeImports(text: string): string[] {
  const specifiers = [
    ...text.matchAll(/^\s*(?:import|export)\b[^;'"]*?\bfrom\s+'(\.{1,2}\/[^']+)'/gm),
    ...text.matchAll(/^\s*import\s+'(\.{1,2}\/[^']+)'/gm),
    ...text.matchAll(/\bimport\(\s*'(\.{1,2}\/[^']+)'\s*\)/g),
  ].map((m) => m[1]!);
  return [...new Set(specifiers)];
}

/** The test/ files a file imports (`./x.js` names ./x.ts). */
function testImports(root: string, file: string, text: string): string[] {
  return relativeImports(text)
    .map((s) => path.posix.normalize(path.posix.join(path.posix.dirname(file), s)))
    .map((f) => f.replace(/\.js$/, '.ts'))
    .filter((f) => f.startsWith('test/') && existsSync(path.join(root, f)));
}

/** What, in a file's own text, opens a store without the switch. */
function ownStoreSignals(text: string): string[] {
  const signals: string[] = [];
  // Type-only imports (`import type { Db }`) open nothing.
  const valueImport = (module: string) =>
    new RegExp(
      String.raw`^import\s+(?!type\b)[^;]*?from\s+'(?:\.\./)+src/db/${module}\.js'`,
      'm',
    ).test(text) ||
    new RegExp(String.raw`\bimport\(\s*'(?:\.\./)+src/db/${module}\.js'\s*\)`).test(text);
  if (valueImport('store')) signals.push('imports src/db/store.js');
  if (valueImport('migrate')) signals.push('imports src/db/migrate.js');
  if (/\bDATA_DIR\b/.test(text))
    signals.push('gives a DATA_DIR (a SQLite store) to a child or a config');
  return signals;
}

export function testFiles(root: string): string[] {
  return readdirSync(path.join(root, 'test'), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.test.ts'))
    .map((f) => `test/${f.split(path.sep).join('/')}`)
    .sort();
}

/** Every test file of `root` (a checkout: its test/**.test.ts sources) and its stores. */
export function storeBindings(root: string): StoreBinding[] {
  const texts = new Map<string, string>();
  const read = (f: string) => {
    let text = texts.get(f);
    if (text === undefined) {
      text = readFileSync(path.join(root, f), 'utf8');
      texts.set(f, text);
    }
    return text;
  };
  /** Whether a file's imports, followed through test/, reach the switch. */
  const reachesSwitch = (file: string): boolean => {
    const seen = new Set([file]);
    const queue = [file];
    for (let f = queue.pop(); f !== undefined; f = queue.pop()) {
      if (f === SWITCH) return true;
      for (const g of testImports(root, f, read(f))) {
        if (!seen.has(g)) {
          seen.add(g);
          queue.push(g);
        }
      }
    }
    return false;
  };

  return testFiles(root).map((file) => {
    const text = read(file);
    const head = text.split('\n').slice(0, HEADER_LINES).join('\n');
    const optOut = OPT_OUT.exec(head);
    const switched = reachesSwitch(file);
    const ownStore = switched ? [] : ownStoreSignals(text);
    if (optOut)
      return {
        file,
        stores: optOut[1] as Stores,
        reason: optOut[2]!.replace(/\n\/\/ +/g, ' ').trim(),
        ownStore,
        switched,
      };
    return { file, stores: switched ? 'both' : 'none', ownStore, switched };
  });
}

/** The files the PostgreSQL pass runs: every store-bound file that did not opt out. */
export function storeBoundFiles(root: string): string[] {
  return storeBindings(root)
    .filter((b) => b.stores === 'both')
    .map((b) => b.file);
}

/** What is wrong with the tree's store rules, one sentence a file; empty when nothing is. */
export function storeViolations(root: string): string[] {
  const out: string[] = [];
  for (const b of storeBindings(root)) {
    const optedOut = b.reason !== undefined;
    if (optedOut && b.reason!.length < 10)
      out.push(`${b.file}: its '// stores: ${b.stores}' line states no reason`);
    if (b.stores === 'none' && b.switched)
      out.push(`${b.file}: says '// stores: none' but its imports reach ${SWITCH}`);
    if (!optedOut && b.ownStore.length)
      out.push(
        `${b.file}: opens a store without ${SWITCH} (${b.ownStore.join('; ')}): use testStoreEnv/testStoreConfig so it runs on both stores, or opt out with '// stores: sqlite-only — <reason>'`,
      );
  }
  return out;
}
