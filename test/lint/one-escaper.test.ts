import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { ROOT } from '../support/cli.js';

/**
 * src/markup.ts is the one HTML escaper (the dashboard, the HTML reports and their charts,
 * the discovery pages). What marks another one: a function named like an HTML escaper, an
 * entity table with the quote entities, or a replace over the HTML-special characters. The
 * XML feed's text escaper (pipeline/feed-formats.ts) writes XML, not HTML: no quotes, CR as
 * &#13;, and none of these marks.
 */
const MARKS: [RegExp, string][] = [
  [/function\s+\w*escape\w*html\w*\s*\(/i, 'a function named like an HTML escaper'],
  [/\b\w*escape\w*html\w*\s*=\s*(\(|function|async)/i, 'an HTML escaper bound to a name'],
  [/['"`]&(quot|#39|#x27|#96);['"`]/, 'an HTML entity table'],
  [
    /\.replace\(\s*\/\[[^\]]*&[^\]]*[<>"'][^\]]*\]\/g/,
    'a replace over the HTML-special characters',
  ],
  [/\.replace\(\s*\/&\/g\s*,\s*['"`]&amp;/, 'a replace of & by &amp;'],
];
const ONE_ESCAPER = path.join('src', 'markup.ts');

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    const rel = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...sources(rel));
    else if (e.name.endsWith('.ts')) out.push(rel);
  }
  return out;
}

function marksOf(code: string): string[] {
  return MARKS.filter(([re]) => re.test(code)).map(([, what]) => what);
}

t.test('the marks catch the escapers the tree used to have', async (t) => {
  const discovery = `const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export function escapeHtml(value: string): string { return value.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!); }`;
  t.ok(marksOf(discovery).length >= 3, 'the discovery pages’ escaper');
  const report = `const HTML_SPECIAL = /[&<>"']/g;\nexport const esc = (v: string) => v.replace(/&/g, '&amp;').replace(/</g, '&lt;');`;
  t.ok(marksOf(report).length >= 1, 'a hand-made chain of replaces');
  t.same(
    marksOf("const XML_ESCAPES = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '\\r': '&#13;' };"),
    [],
  );
});

t.test('no HTML escaper but src/markup.ts in src/ or pipeline/', async (t) => {
  const files = [...sources('src'), ...sources('pipeline')];
  t.ok(files.includes(ONE_ESCAPER), 'the escaper is where this test expects it');
  t.ok(marksOf(fs.readFileSync(path.join(ROOT, ONE_ESCAPER), 'utf8')).length > 0);
  for (const file of files) {
    if (file === ONE_ESCAPER) continue;
    t.same(marksOf(fs.readFileSync(path.join(ROOT, file), 'utf8')), [], file);
  }
});
