/**
 * The import graph of src/ and pipeline/, read with the TypeScript parser: no cycle of real
 * (non-type) imports, and no import from a lower floor to a higher one. ESLint's boundary rules
 * (eslint.config.js) name the forbidden pairs one by one; this test holds the whole picture, so a
 * new room or a new arrow that runs back up fails here even when no rule names it yet.
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import ts from 'typescript';
import { ROOT } from '../support/cli.js';

/** Floors from the ground up: a file may import its own floor's files and any lower floor's. */
const FLOORS: [floor: number, prefix: string][] = [
  [0, 'src/net/'],
  [0, 'src/runtime/'],
  [0, 'src/errors.ts'],
  [0, 'src/config.ts'],
  [0, 'src/ids.ts'],
  [0, 'src/logger.ts'],
  [0, 'src/currencies.ts'],
  [0, 'src/version.ts'],
  [0, 'src/markup.ts'],
  [0, 'src/text.ts'],
  [0, 'src/error-status.ts'],
  [0, 'src/publish/'],
  [1, 'src/db/'],
  [2, 'src/domain/'],
  [3, 'src/platforms/'],
  [3, 'src/http/'],
  [3, 'src/reports/'],
  [3, 'src/seed/'],
  [3, 'pipeline/'],
  [4, 'src/dashboard/'],
  [5, 'src/'],
  [6, 'src/cli/'],
  [7, 'src/main.ts'],
];

function floorOf(file: string): number {
  let best: [number, string] | undefined;
  for (const [floor, prefix] of FLOORS) {
    if (file === prefix || (prefix.endsWith('/') && file.startsWith(prefix))) {
      if (!best || prefix.length > best[1].length) best = [floor, prefix];
    }
  }
  if (!best) throw new Error(`${file}: no floor for it in test/lint/import-graph.test.ts`);
  return best[0];
}

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    const rel = `${dir}/${entry.name}`;
    if (entry.isDirectory()) out.push(...sourceFiles(rel));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) out.push(rel);
  }
  return out;
}

/** The files a module imports for real: type-only imports and exports are left out. */
function realImports(file: string): string[] {
  const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false);
  const targets: string[] = [];
  const add = (specifier: ts.Expression | undefined) => {
    if (!specifier || !ts.isStringLiteral(specifier)) return;
    const spec = specifier.text;
    if (!spec.startsWith('.')) return;
    const resolved = path.posix.normalize(
      path.posix.join(path.posix.dirname(file), spec.replace(/\.js$/, '.ts')),
    );
    targets.push(resolved);
  };
  for (const statement of source.statements) {
    if (ts.isImportDeclaration(statement)) {
      const clause = statement.importClause;
      if (clause?.isTypeOnly) continue;
      const named = clause?.namedBindings;
      const onlyTypes =
        clause !== undefined &&
        clause.name === undefined &&
        named !== undefined &&
        ts.isNamedImports(named) &&
        named.elements.length > 0 &&
        named.elements.every((e) => e.isTypeOnly);
      if (!onlyTypes) add(statement.moduleSpecifier);
    } else if (ts.isExportDeclaration(statement) && !statement.isTypeOnly) {
      add(statement.moduleSpecifier);
    }
  }
  return targets;
}

const files = [...sourceFiles('src'), ...sourceFiles('pipeline')];
const known = new Set(files);
const graph = new Map(files.map((f) => [f, realImports(f).filter((x) => known.has(x))]));

t.test('every file of src/ and pipeline/ has a floor', async (t) => {
  for (const file of files) t.doesNotThrow(() => floorOf(file), file);
});

t.test('no import runs from a lower floor to a higher one', async (t) => {
  const upward: string[] = [];
  for (const [file, imports] of graph) {
    for (const target of imports) {
      if (floorOf(target) > floorOf(file)) upward.push(`${file} -> ${target}`);
    }
  }
  t.same(upward, [], 'imports that run back up');
});

t.test('no cycle of real imports', async (t) => {
  // Tarjan's strongly connected components; any component of two or more files is a cycle.
  let index = 0;
  const indices = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (v: string) => {
    indices.set(v, index);
    low.set(v, index);
    index++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!indices.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, indices.get(w)!));
    }
    if (low.get(v) === indices.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || (graph.get(v) ?? []).includes(v)) cycles.push(component.sort());
    }
  };
  for (const file of files) if (!indices.has(file)) visit(file);
  t.same(cycles, [], 'cycles of real imports');
});

t.test('the reader sees a cycle and an upward import when there is one', async (t) => {
  // Guards the test itself: the two rules above would pass on an empty graph.
  t.ok(graph.size > 200, `read ${graph.size} files`);
  t.ok(
    (graph.get('src/server.ts') ?? []).some((f) => f.startsWith('src/domain/')),
    'server.ts imports the domain',
  );
  t.equal(floorOf('src/db/store.ts') < floorOf('src/domain/products/products.ts'), true);
});
