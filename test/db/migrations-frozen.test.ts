/**
 * Landed migrations are frozen: src/db/migrations/manifest.json holds the sha256 of each
 * migration file (and of the PostgreSQL column-types plugin every migration's schema goes
 * through), and this test fails when a file's text no longer matches. A store migrated by
 * the old text would otherwise differ from one migrated from scratch. A change to the schema
 * is a new migration; a new migration's line goes into the manifest when it lands.
 */
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { migrations } from '../../src/db/migrations/index.js';
import { ROOT } from '../support/cli.js';

const DIR = path.join(ROOT, 'src', 'db', 'migrations');
const MANIFEST = 'src/db/migrations/manifest.json';

/** sha256 of a file's text, line endings as LF (a checkout with CRLF is the same file). */
function sha256(file: string): string {
  const text = readFileSync(path.join(DIR, file), 'utf8').replace(/\r\n/g, '\n');
  return createHash('sha256').update(text).digest('hex');
}

const manifest = JSON.parse(readFileSync(path.join(ROOT, MANIFEST), 'utf8')) as Record<
  string,
  string
>;
/** Every file of the folder but the index (which gains a line per migration). */
const files = readdirSync(DIR)
  .filter((f) => f.endsWith('.ts') && f !== 'index.ts')
  .sort();

t.test('every landed migration file is the text it landed with', async (t) => {
  for (const file of files) {
    const expected = manifest[file];
    if (expected === undefined) continue; // the next test names it
    t.equal(
      sha256(file),
      expected,
      `${file} is unchanged since it landed (a landed migration is never edited: write a new one)`,
    );
  }
});

t.test('every migration file is in the manifest, and every manifest line a file', async (t) => {
  const missing = files.filter((f) => manifest[f] === undefined);
  t.same(
    missing.map((f) => `"${f}": "${sha256(f)}"`),
    [],
    `a new migration's line goes into ${MANIFEST} when it lands`,
  );
  t.same(
    Object.keys(manifest).filter((f) => !files.includes(f)),
    [],
    'a landed migration is never removed',
  );
});

t.test('the migrations the store runs are the files of the manifest', async (t) => {
  const run = Object.keys(migrations).map((name) => `${name}.ts`);
  t.same(
    run.filter((f) => manifest[f] === undefined),
    [],
    'every migration in index.ts is in the manifest',
  );
  t.same(
    Object.keys(manifest).filter((f) => /^\d{14}_/.test(f) && !run.includes(f)),
    [],
    'every migration of the manifest is in index.ts',
  );
});

t.test('a migration imports only kysely and its own folder', async (t) => {
  for (const file of files) {
    const text = readFileSync(path.join(DIR, file), 'utf8');
    const specifiers = [...text.matchAll(/^\s*(?:import|export)\b[^;]*?from\s+'([^']+)'/gm)].map(
      (m) => m[1]!,
    );
    const outside = specifiers.filter((s) => !/^kysely(\/|$)/.test(s) && !/^\.\/[^/]+$/.test(s));
    t.same(outside, [], `${file} imports nothing outside kysely and src/db/migrations/`);
  }
});
