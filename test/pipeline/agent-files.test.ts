import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pino } from 'pino';
import t from 'tap';
import { publishDiscovery } from '../../pipeline/discovery/index.js';
import { startDiscoveryServer } from '../../src/http/discovery/server.js';
import { seedDemo } from '../../src/seed/demo.js';
import { addProduct, repoRoot } from '../support/discovery.js';
import { createPipelineContext, startTestStore } from '../support/pipeline.js';

// The files agents look for at the root of the published tree: robots.txt, sitemap.xml,
// llms.txt (and the UCP profile, test/http/discovery/ucp-catalog.test.ts), rebuilt with it.

const xmllint = spawnSync('xmllint', ['--version']).error ? undefined : 'xmllint';

t.test('robots.txt, sitemap.xml and llms.txt describe the published registry', async (t) => {
  const s = await startTestStore(t);
  await seedDemo(s.db, { currency: 'USD' }, { analytics: false });
  await addProduct(s.db, { name: 'Odd', attributes: { brand: 'Brackets [and] \\ Co' } });
  await publishDiscovery(createPipelineContext(t, s.store, s.config));
  const read = (file: string) => fs.readFileSync(path.join(s.config.PUBLIC_DIR, file), 'utf8');
  const index = JSON.parse(read('v1/index.json')) as {
    brands: { name: string; html_url: string; feeds: { json: string; ndjson: string } }[];
  };

  const robots = read('robots.txt');
  t.match(robots, /^User-agent: \*\nAllow: \/$/m, 'the whole registry may be fetched');
  t.match(robots, /^Sitemap: https:\/\/feeds\.example\.com\/sitemap\.xml$/m);

  const sitemap = read('sitemap.xml');
  const locs = [...sitemap.matchAll(/<loc>([^<]*)<\/loc>/g)].map((m) => m[1]);
  t.same(locs, ['https://feeds.example.com/', ...index.brands.map((b) => b.html_url)]);
  if (xmllint) {
    const file = path.join(s.dir, 'sitemap.xml');
    fs.writeFileSync(file, sitemap);
    const xsd = path.join(repoRoot(), 'test', 'fixtures', 'sitemap-0.9.xsd');
    execFileSync(xmllint, ['--noout', '--schema', xsd, file], { stdio: 'pipe' });
    t.pass('valid against the sitemaps.org 0.9 rules');
  } else t.comment('xmllint not installed: the schema check is skipped');

  const llms = read('llms.txt');
  t.match(llms, /^# My Store\n\n> /);
  t.match(llms, '[Registry index](https://feeds.example.com/v1/index.json)');
  t.match(llms, '[UCP business profile](https://feeds.example.com/.well-known/ucp)');
  for (const b of index.brands) t.match(llms, `](${b.feeds.json})`, b.name);
  t.match(llms, '[Brackets \\[and\\] \\\\ Co](', 'a name cannot break its link');

  const headers = read('_headers');
  t.match(headers, /\/\.well-known\/ucp\n( {2}.+\n)* {2}Cache-Control: public, max-age=300/);
  t.match(headers, /\/sitemap\.xml\n( {2}.+\n)* {2}Content-Type: application\/xml; charset=utf-8/);
  const nginx = fs.readFileSync(path.join(s.config.DATA_DIR, 'nginx', 'discovery.conf'), 'utf8');
  t.match(nginx, 'location = /.well-known/ucp {');
  t.match(nginx, 'location ~ "^/(robots\\.txt|sitemap\\.xml|llms\\.txt)$" {');

  const server = await startDiscoveryServer({
    config: s.config,
    db: s.db,
    logger: pino({ level: 'silent' }),
    port: 0,
    recordRequests: false,
  });
  t.teardown(() => server.close());
  for (const [file, type] of [
    ['robots.txt', 'text/plain; charset=utf-8'],
    ['sitemap.xml', 'application/xml; charset=utf-8'],
    ['llms.txt', 'text/plain; charset=utf-8'],
    ['.well-known/ucp', 'application/json; charset=utf-8'],
  ] as const) {
    const res = await fetch(`${server.url}/${file}`);
    t.equal(res.status, 200, file);
    t.equal(res.headers.get('content-type'), type, file);
    t.equal(await res.text(), read(file), `${file} as published`);
  }
  t.equal((await fetch(`${server.url}/.well-known/other`)).status, 404, 'nothing else there');

  // Unchanged content is not rewritten; a new brand is.
  const before = fs.statSync(path.join(s.config.PUBLIC_DIR, 'robots.txt')).ino;
  await addProduct(s.db, { name: 'Kite', attributes: { brand: 'Skyward' } });
  await publishDiscovery(createPipelineContext(t, s.store, s.config));
  t.equal(fs.statSync(path.join(s.config.PUBLIC_DIR, 'robots.txt')).ino, before, 'robots.txt kept');
  t.match(read('sitemap.xml'), '/v1/brands/skyward/</loc>');
  t.match(read('llms.txt'), '[Skyward](');
});
