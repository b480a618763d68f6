import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import ts from 'typescript';
import { ROOT } from '../support/cli.js';

/** Issue 21: no function over this many lines where the servers and the dashboard are wired. */
const MAX_LINES = 120;
const WATCHED = ['src/server.ts', 'src/dashboard', 'src/http/discovery'];

interface Long {
  name: string;
  line: number;
  lines: number;
}

/** Functions (declarations, methods, arrows, expressions) longer than `max` lines in a source. */
function longFunctions(file: string, text: string, max = MAX_LINES): Long[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: Long[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const lines = last - first + 1;
      if (lines > max) {
        const named = (node as { name?: ts.Node }).name;
        found.push({ name: named ? named.getText(source) : '(anonymous)', line: first + 1, lines });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function sourcesUnder(relative: string): string[] {
  const full = path.join(ROOT, relative);
  if (fs.statSync(full).isFile()) return [relative];
  return fs
    .readdirSync(full, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.ts'))
    .map((name) => path.join(relative, name));
}

t.test('no function over 120 lines in server.ts, dashboard/ or http/discovery/', async (t) => {
  const files = WATCHED.flatMap(sourcesUnder);
  t.ok(files.length > 10, `${files.length} files read`);
  const long = files.flatMap((file) =>
    longFunctions(file, fs.readFileSync(path.join(ROOT, file), 'utf8')).map(
      (f) => `${file}:${f.line} ${f.name} has ${f.lines} lines`,
    ),
  );
  t.same(long, [], 'split these');
});

t.test('the check finds a long function of each kind', async (t) => {
  const body = Array.from({ length: 130 }, (_, i) => `  const v${i} = ${i};`).join('\n');
  const text = [
    `export function declared() {\n${body}\n}`,
    `const arrow = () => {\n${body}\n};`,
    `class C {\n  method() {\n${body}\n  }\n}`,
    `export function short() {\n  return 1;\n}`,
  ].join('\n');
  const long = longFunctions('example.ts', text).map((f) => f.name);
  t.same(long, ['declared', '(anonymous)', 'method']);
});
