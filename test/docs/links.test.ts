import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';

/**
 * Every relative link in README.md and docs/ leads somewhere: the file exists and, for
 * `path#anchor` (or `#anchor` within the page), a heading of that file has that GitHub slug.
 */

const ROOT = path.resolve(import.meta.dirname, '..', '..', '..');

function markdownFiles(): string[] {
  const files = ['README.md'];
  const walk = (dir: string): void => {
    for (const entry of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
      const rel = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(rel);
      else if (entry.name.endsWith('.md')) files.push(rel);
    }
  };
  walk('docs');
  return files.sort();
}

/** The text outside fenced code blocks, with each line's number. */
function proseLines(text: string): { line: number; text: string }[] {
  const out: { line: number; text: string }[] = [];
  let fence: string | null = null;
  text.split('\n').forEach((line, i) => {
    const marker = /^\s*(```+|~~~+)/.exec(line)?.[1];
    if (marker) {
      if (fence === null) fence = marker[0]!;
      else if (marker[0] === fence) fence = null;
      return;
    }
    if (fence === null) out.push({ line: i + 1, text: line });
  });
  return out;
}

/** GitHub's anchor for a heading: its text lower-cased, punctuation dropped, spaces as `-`. */
function githubSlug(heading: string): string {
  const text = heading
    .replace(/`([^`]*)`/g, '$1')
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/[*~]/g, '');
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
    .replace(/ /g, '-');
}

const anchorsCache = new Map<string, Set<string>>();
function anchorsOf(file: string): Set<string> {
  let anchors = anchorsCache.get(file);
  if (anchors) return anchors;
  anchors = new Set();
  const seen = new Map<string, number>();
  for (const { text } of proseLines(fs.readFileSync(file, 'utf8'))) {
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(text);
    if (!m) continue;
    const slug = githubSlug(m[1]!);
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    anchors.add(n === 0 ? slug : `${slug}-${n}`);
  }
  anchorsCache.set(file, anchors);
  return anchors;
}

interface Link {
  file: string;
  line: number;
  target: string;
}

function relativeLinks(file: string, root = ROOT): Link[] {
  const links: Link[] = [];
  for (const { line, text } of proseLines(fs.readFileSync(path.join(root, file), 'utf8'))) {
    const prose = text.replace(/`[^`]*`/g, '');
    // Inline links [text](target "title") and reference definitions `[id]: target`.
    const targets = [
      ...[...prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]!),
      ...[...prose.matchAll(/^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$/g)].map((m) => m[1]!),
    ];
    for (const target of targets) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:, ...
      links.push({ file, line, target });
    }
  }
  return links;
}

/** Why a link is broken, or null when it leads somewhere. */
function brokenBecause(link: Link, root = ROOT): string | null {
  const [rawPath, anchor] = link.target.split('#', 2) as [string, string | undefined];
  const target = rawPath
    ? path.resolve(path.dirname(path.join(root, link.file)), decodeURIComponent(rawPath))
    : path.join(root, link.file);
  if (!target.startsWith(root + path.sep)) return 'it leaves the repository';
  if (!fs.existsSync(target)) return `${path.relative(root, target)} does not exist`;
  if (anchor !== undefined) {
    if (!target.endsWith('.md')) return 'an anchor into a file that is not markdown';
    if (!anchorsOf(target).has(anchor.toLowerCase())) {
      return `${path.relative(root, target)} has no heading #${anchor}`;
    }
  }
  return null;
}

t.test('GitHub slugs of headings', async (t) => {
  t.equal(githubSlug('Running on PostgreSQL'), 'running-on-postgresql');
  t.equal(
    githubSlug('Moving a store: `agentshelf store copy`'),
    'moving-a-store-agentshelf-store-copy',
  );
  t.equal(githubSlug('Feeds and channels'), 'feeds-and-channels');
  t.equal(githubSlug('Plans & rate limits'), 'plans--rate-limits');
  t.equal(githubSlug('Who counts as an AI agent?'), 'who-counts-as-an-ai-agent');
  t.equal(githubSlug('The `RATE_LIMIT_STORE` setting'), 'the-rate_limit_store-setting');
});

t.test('the link checker finds broken links', async (t) => {
  const dir = t.testdir({
    'a.md': '# Top\n\n## Second part\n\n## Second part\n',
    'b.md':
      'See [a](a.md), [its part](a.md#second-part) and [gone](gone.md).\n\n' +
      '```md\n[in a fence](fenced.md)\n```\n\n`[in code](code.md)` [web](https://example.com)\n',
  });
  const check = (target: string) => brokenBecause({ file: 'b.md', line: 1, target }, dir);
  t.equal(check('a.md'), null);
  t.equal(check('a.md#second-part'), null);
  t.equal(check('a.md#second-part-1'), null, 'a repeated heading gets -1');
  t.match(check('a.md#third-part'), /has no heading #third-part/);
  t.match(check('missing.md'), /does not exist/);
  t.match(check('../'.repeat(20) + 'etc/passwd'), /leaves the repository/);
  t.same(
    relativeLinks('b.md', dir).map((l) => l.target),
    ['a.md', 'a.md#second-part', 'gone.md'],
    'links in fences, in code spans and to other sites are not read',
  );
});

t.test('every relative link in README.md and docs/ leads somewhere', async (t) => {
  const files = markdownFiles();
  t.ok(files.length > 5, `found ${files.length} markdown files`);
  let count = 0;
  for (const file of files) {
    for (const link of relativeLinks(file)) {
      count++;
      const why = brokenBecause(link);
      t.equal(why, null, `${link.file}:${link.line} (${link.target})${why ? `: ${why}` : ''}`);
    }
  }
  t.ok(count > 20, `checked ${count} links`);
});
