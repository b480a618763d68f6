import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { parse as parseCsv } from 'csv-parse/sync';
import { XMLValidator } from 'fast-xml-parser';
import { sql } from 'kysely';
import t from 'tap';
import { seedSynthetic } from '../../src/seed/synthetic.js';
import {
  CLI,
  cliEnv,
  createFeed,
  feedPath,
  runCli,
  runFeeds,
  temporaries,
  waitFor,
} from '../support/feeds.js';
import { productBody, startTestServer } from '../support/server.js';

function sha(file: string): string {
  return createHash('sha256').update(fs.readFileSync(file)).digest('hex');
}

t.test('a feed whose content did not change is not rewritten and keeps its ETag', async (t) => {
  const s = await startTestServer(t);
  await s.request('POST', '/v1/products', { body: productBody({ id: 'A' }) });
  const feed = await createFeed(s, { name: 'F', format: 'json' });
  await runFeeds(s);
  const file = feedPath(s, feed.id, 'json');
  const before = [file, `${file}.gz`].map((f) => fs.statSync(f));
  const etag = (await s.request('GET', `/v1/feeds/${feed.id}/export`)).headers.get('etag');
  const lastUpdated = (await s.request('GET', `/v1/feeds/${feed.id}`)).body.last_updated;

  const second = await runFeeds(s);
  t.equal(second.stages[0]!.outputs![0]!.changed, false);
  const after = [file, `${file}.gz`].map((f) => fs.statSync(f));
  for (const [i, stat] of after.entries()) {
    t.equal(stat.ino, before[i]!.ino, 'the same file (no rename)');
    t.equal(stat.mtimeMs, before[i]!.mtimeMs, 'not written');
  }
  t.equal((await s.request('GET', `/v1/feeds/${feed.id}/export`)).headers.get('etag'), etag);
  const got = (await s.request('GET', `/v1/feeds/${feed.id}`)).body;
  t.equal(got.last_updated, lastUpdated, 'last_updated stays');
  t.not(got.generated_at, null);

  fs.rmSync(file);
  const third = await runFeeds(s);
  t.equal(third.stages[0]!.outputs![0]!.changed, true, 'a missing file is written again');
  t.ok(fs.existsSync(file));

  await s.request('PUT', '/v1/products/A', { body: { name: 'Renamed' } });
  await runFeeds(s);
  t.not((await s.request('GET', `/v1/feeds/${feed.id}/export`)).headers.get('etag'), etag);
  t.match(fs.readFileSync(file, 'utf8'), /"title":"Renamed"/);
});

t.test('a build killed with SIGKILL halfway leaves every published file whole', async (t) => {
  const s = await startTestServer(t);
  await seedSynthetic(s.server.store.db, { count: 15_000, brands: 40 });
  const ACTIVE = 14_700; // every 50th synthetic product is a draft
  const formats = ['json', 'csv', 'xml'] as const;
  const feeds = [];
  for (const format of formats) feeds.push(await createFeed(s, { name: format, format }));
  const env = cliEnv(s);
  t.equal((await runCli(['build'], env)).code, 0, 'the first build publishes');
  const files = feeds.flatMap((f) => [
    feedPath(s, f.id, f.format),
    `${feedPath(s, f.id, f.format)}.gz`,
  ]);
  const v1 = files.map(sha);

  await sql`update products set price_minor = price_minor + 1`.execute(s.server.store.db);
  const dir = path.join(s.config.DATA_DIR, 'feeds');
  const child = spawn(process.execPath, [CLI, 'build'], { env, stdio: 'ignore' });
  const exited = new Promise<NodeJS.Signals | null>((resolve) =>
    child.on('exit', (_code, signal) => resolve(signal)),
  );
  // Kill it while a feed file is being written: a temporary with bytes in it exists.
  await waitFor(
    () =>
      temporaries(dir).some((n) => {
        try {
          return !n.includes('diagnostics') && fs.statSync(path.join(dir, n)).size > 100_000;
        } catch {
          return false;
        }
      }),
    30_000,
    'a half-written temporary file',
  );
  child.kill('SIGKILL');
  t.equal(await exited, 'SIGKILL');
  t.ok(temporaries(dir).length > 0, 'it died halfway: its temporary files are still there');

  const afterKill = files.map(sha);
  for (const [i, f] of feeds.entries()) {
    const text = fs.readFileSync(feedPath(s, f.id, f.format), 'utf8');
    if (f.format === 'json') t.equal(JSON.parse(text).products.length, ACTIVE, 'json parses whole');
    if (f.format === 'csv') t.equal(parseCsv(text, { columns: true }).length, ACTIVE, 'csv whole');
    if (f.format === 'xml') t.equal(XMLValidator.validate(text), true, 'xml well-formed');
    const gz = zlib.gunzipSync(fs.readFileSync(files[i * 2 + 1]!)).toString('utf8');
    t.equal(gz, text, `${f.format}.gz is whole and matches its file`);
  }

  const rerun = await runCli(['build', '--wait', '0'], env);
  t.equal(rerun.code, 0, `the killed holder does not block the next build: ${rerun.stderr}`);
  t.same(temporaries(dir), [], 'the next run removes the leftovers');
  const v2 = files.map(sha);
  for (const [i, file] of files.entries()) {
    t.ok(
      afterKill[i] === v1[i] || afterKill[i] === v2[i],
      `${path.basename(file)} was the old or the new file, never a part`,
    );
  }
  t.notSame(v2, v1, 'the rerun published the new prices');
  const runs = await s.server.store.db
    .selectFrom('pipeline_runs')
    .select(['status'])
    .orderBy('id')
    .execute();
  t.same(
    runs.map((r) => r.status),
    ['succeeded', 'interrupted', 'succeeded'],
    'the killed run is recorded as interrupted',
  );
});
