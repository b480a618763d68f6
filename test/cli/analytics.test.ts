/**
 * `agentshelf analytics import` and `analytics agents` through the real CLI, in child
 * processes, on the test store (a SQLite file, or PostgreSQL): what the fixtures (written as each CDN documents its logs)
 * store, that a second import adds nothing, and how bad input is reported.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import t from 'tap';
import { loadConfig } from '../../src/config.js';
import { openStore } from '../../src/db/store.js';
import { MAIN, ROOT, runCli } from '../support/cli.js';
import { testStoreEnv } from '../support/store.js';

const LOGS = path.join(ROOT, 'test/fixtures/logs');
const FILES = [
  'nginx-combined.log',
  'cloudflare-http-requests.ndjson',
  'cloudflare-http-requests.ndjson.gz',
  'cloudfront-E2EXAMPLE.2026-11-24-10.a1b2c3d4.gz',
].map((f) => path.join(LOGS, f));

interface Row {
  source: string;
  path: string;
  brand: string | null;
  status: number;
  agent: string | null;
  operator: string | null;
  kind: string;
  verified: number;
  dedupe_key: string;
  at: string;
}

/** The CLI's environment for a test directory: DATA_DIR, and a fresh DATABASE_URL on PostgreSQL. */
async function storeEnv(dataDir: string): Promise<Record<string, string>> {
  return { DATA_DIR: dataDir, ...(await testStoreEnv(dataDir)) };
}

async function rows(dataDir: string): Promise<Row[]> {
  const env = { DATA_DIR: dataDir, ...(await testStoreEnv(dataDir, { fresh: false })) };
  const store = openStore(loadConfig({ ...env, PUBLIC_DIR: path.join(dataDir, 'public') }));
  try {
    const { rows } = await sql<Row>`select source, path, brand, status, agent, operator, kind,
      verified, dedupe_key, at from interactions order by at, dedupe_key`.execute(store.db);
    return rows.map((r) => ({ ...r, status: Number(r.status), verified: Number(r.verified) }));
  } finally {
    await store.close();
  }
}

t.test('the fixtures import once: 17 requests for the discovery tree, classified', async (t) => {
  const dataDir = t.testdir();
  const env = await storeEnv(dataDir);
  const first = runCli(['analytics', 'import', '--json', ...FILES], env);
  t.equal(first.status, 0, first.stderr);
  const s = JSON.parse(first.stdout) as Record<string, unknown>;
  t.match(s, { lines: 40, imported: 17, duplicates: 7, skipped: 3, bad: 10 });
  t.same(s.by_format, {
    nginx: { files: 1, lines: 12, imported: 6 },
    cloudflare: { files: 2, lines: 18, imported: 6 },
    cloudfront: { files: 1, lines: 10, imported: 5 },
  });
  t.same(
    (s.bad_lines as { file: string; line: number }[]).map(
      (b) => `${path.basename(b.file)}:${b.line}`,
    ),
    [
      'nginx-combined.log:5',
      'nginx-combined.log:6',
      'nginx-combined.log:9',
      'cloudflare-http-requests.ndjson:6',
      'cloudflare-http-requests.ndjson:7',
      'cloudflare-http-requests.ndjson:8',
      'cloudflare-http-requests.ndjson.gz:6',
      'cloudflare-http-requests.ndjson.gz:7',
      'cloudflare-http-requests.ndjson.gz:8',
      'cloudfront-E2EXAMPLE.2026-11-24-10.a1b2c3d4.gz:8',
    ],
  );
  t.type(s.duration_ms, 'number');

  const stored = await rows(dataDir);
  t.equal(stored.length, 17);
  const count = (f: (r: Row) => boolean) => stored.filter(f).length;
  t.equal(
    count((r) => r.source === 'nginx'),
    6,
  );
  t.equal(
    count((r) => r.source === 'cloudflare'),
    6,
  );
  t.equal(
    count((r) => r.source === 'cloudfront'),
    5,
  );
  const by = (source: string, agent: string) =>
    stored.filter((r) => r.source === source && r.agent === agent);
  t.match(by('nginx', 'GPTBot'), [
    {
      operator: 'OpenAI',
      kind: 'training',
      path: '/v1/index.json',
      at: '2026-11-24T10:15:32.000Z',
    },
  ]);
  t.match(by('nginx', 'ChatGPT-User'), [
    { kind: 'assistant', brand: 'acme', path: '/v1/feeds/acme/products.json' },
  ]);
  t.match(by('nginx', 'Googlebot'), [{ kind: 'bot', operator: null }]);
  t.match(by('cloudflare', 'Perplexity-User'), [{ operator: 'Perplexity', kind: 'assistant' }]);
  t.match(
    by('cloudflare', 'chatgpt.com'),
    [{ kind: 'agent', verified: 0, brand: 'acme' }],
    'Signature-Agent',
  );
  t.match(by('cloudfront', 'OAI-SearchBot'), [{ kind: 'search', status: 200 }]);
  t.match(by('cloudfront', 'meta-externalagent'), [{ operator: 'Meta', kind: 'training' }]);
  t.equal(by('cloudfront', 'GPTBot').length, 1, 'the repeated CloudFront request is stored once');
  t.match(by('cloudflare', 'GPTBot'), [{ dedupe_key: 'cloudflare:8e7a1c2b3d4e5f60' }], 'RayID');
  t.match(by('cloudfront', 'GPTBot'), [
    { dedupe_key: 'cloudfront:SOX4xwn4XV6Q4rgb7XiVGOHms_BGlTAC4KyHmureZmBNrjGdRLiNIQ==' },
  ]);
  t.equal(
    count((r) => r.kind === 'human'),
    3,
    'Chrome (nginx, Cloudflare), Safari (CloudFront)',
  );
  t.notOk(
    stored.some((r) => /wp-login|favicon/.test(r.path)),
    'no path outside the tree',
  );
  // robots.txt, sitemap.xml and llms.txt are published files (docs/ucp.md): an agent's fetch
  // of one counts as a request for the tree.
  t.ok(
    stored.some((r) => r.path === '/robots.txt'),
    'robots.txt is in the tree',
  );

  const again = runCli(['analytics', 'import', '--json', ...FILES], env);
  t.equal(again.status, 0, again.stderr);
  t.match(JSON.parse(again.stdout), { imported: 0, duplicates: 24, skipped: 3, bad: 10 });
  t.equal((await rows(dataDir)).length, 17, 're-importing adds nothing');

  const text = runCli(['analytics', 'import', FILES[0]!], env);
  t.equal(text.status, 0);
  t.match(
    text.stdout,
    /nginx-combined\.log: nginx, 12 lines, 0 imported, 6 duplicates, 2 skipped, 3 bad/,
  );
  t.match(text.stdout, /bad: .*nginx-combined\.log:6: time: '24\/Foo\/2026:10:16:10 \+0000'/);
});

t.test('--host and --prefix choose which requests count', async (t) => {
  const dataDir = t.testdir({
    'prefixed.log': [
      '192.0.2.1 - - [24/Nov/2026:10:00:00 +0000] "GET /agentshelf/v1/index.json HTTP/1.1" 200 10 "-" "Mozilla/5.0 (compatible; ClaudeBot/1.0; +claudebot@anthropic.com)"',
      '192.0.2.1 - - [24/Nov/2026:10:00:01 +0000] "GET /v1/index.json HTTP/1.1" 200 10 "-" "Mozilla/5.0 (compatible; ClaudeBot/1.0; +claudebot@anthropic.com)"',
      '',
    ].join('\n'),
  });
  const env = await storeEnv(dataDir);
  const prefixed = runCli(
    [
      'analytics',
      'import',
      '--json',
      '--prefix',
      '/agentshelf',
      path.join(dataDir, 'prefixed.log'),
    ],
    env,
  );
  t.equal(prefixed.status, 0, prefixed.stderr);
  t.match(JSON.parse(prefixed.stdout), { imported: 1, skipped: 1 });
  t.match(await rows(dataDir), [{ path: '/agentshelf/v1/index.json', agent: 'ClaudeBot' }]);

  const other = runCli(
    ['analytics', 'import', '--json', '--host', 'shop.example.com', FILES[1]!],
    env,
  );
  t.match(JSON.parse(other.stdout), { imported: 0, skipped: 6 });
});

t.test('FILE - reads standard input, gzipped or not', async (t) => {
  const dataDir = t.testdir();
  const env = await storeEnv(dataDir);
  const run = (input: Buffer) =>
    spawnSync(process.execPath, [MAIN, 'analytics', 'import', '--json', '-'], {
      env: { ...process.env, ...env, LOG_LEVEL: 'warn' },
      input,
      encoding: 'utf8',
    });
  const gz = run(fs.readFileSync(FILES[2]!));
  t.equal(gz.status, 0, gz.stderr);
  t.match(JSON.parse(gz.stdout), {
    files: [{ file: '-', format: 'cloudflare', gzip: true }],
    imported: 6,
  });
  const plain = run(fs.readFileSync(FILES[1]!));
  t.match(JSON.parse(plain.stdout), { files: [{ gzip: false }], imported: 0, duplicates: 6 });
  t.equal((await rows(dataDir)).length, 6);
});

t.test('bad input: a file of another format fails the run, the others are imported', async (t) => {
  const dataDir = t.testdir({ 'notes.txt': 'hello\n' });
  const env = await storeEnv(dataDir);
  const res = runCli(
    [
      'analytics',
      'import',
      path.join(dataDir, 'notes.txt'),
      FILES[0]!,
      path.join(dataDir, 'nope.log'),
    ],
    env,
  );
  t.equal(res.status, 1);
  t.match(res.stderr, /notes\.txt: not a log format agentshelf reads/);
  t.match(res.stderr, /nope\.log: cannot be read: ENOENT/);
  t.equal((await rows(dataDir)).length, 6);

  const usage = runCli(['analytics', 'import'], env);
  t.equal(usage.status, 2);
  t.match(usage.stderr, /needs at least one FILE/);
  t.equal(runCli(['analytics', 'import', '--batch', '0', FILES[0]!], env).status, 2);
  t.equal(runCli(['analytics', 'import', '--prefix', 'x', FILES[0]!], env).status, 2);
  const unknown = runCli(['analytics', 'frobnicate'], env);
  t.equal(unknown.status, 2);
  t.match(unknown.stderr, /unknown command 'frobnicate': use import, agents/);
  const help = runCli(['analytics', '--help'], env);
  t.equal(help.status, 0);
  t.match(help.stdout, /analytics import FILE\.\.\./);
  t.match(help.stdout, /analytics agents/);
  t.equal(runCli(['analytics', 'import', '--help']).status, 0);
});

t.test('analytics agents prints the table', async (t) => {
  const text = runCli(['analytics', 'agents']);
  t.equal(text.status, 0);
  t.match(text.stdout, /^NAME\s+OPERATOR\s+KIND\n/);
  t.match(text.stdout, /\nChatGPT-User\s+OpenAI\s+assistant\n/);
  t.match(text.stdout, /\nGPTBot\s+OpenAI\s+training\n/);
  t.match(
    text.stdout,
    /robots\.txt tokens only, never in a request: Google-Extended, Applebot-Extended/,
  );
  const json = runCli(['analytics', 'agents', '--json']);
  const table = JSON.parse(json.stdout) as {
    source: string;
    agents: { name: string; kind: string }[];
  };
  t.match(table.source, /ai-robots-txt/);
  const file = JSON.parse(
    fs.readFileSync(path.join(ROOT, 'src/domain/analytics/ai-agents.json'), 'utf8'),
  ) as { agents: unknown[] };
  t.equal(table.agents.length, file.agents.length, 'every row of the data file');
  t.match(
    table.agents.find((a) => a.name === 'OAI-SearchBot'),
    { kind: 'search' },
  );
});
