import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { createFeed, runFeeds } from '../../support/feeds.js';
import { productBody, startTestServer } from '../../support/server.js';

// Regression: feed files were once written to PUBLIC_DIR/feeds/ and the discovery server
// served any .json under PUBLIC_DIR, so a merchant's private feeds were public.
t.test(
  'feed files stay out of PUBLIC_DIR, and the discovery server answers only / and /v1/',
  async (t) => {
    const s = await startTestServer(t);
    await s.request('POST', '/v1/products', {
      body: productBody({ id: 'A', attributes: { brand: 'Acme' } }),
    });
    const feed = await createFeed(s, { name: 'Private', format: 'json' });
    await runFeeds(s);
    t.ok(
      fs.existsSync(path.join(s.config.DATA_DIR, 'feeds', `${feed.id}.json`)),
      'the feed is under DATA_DIR',
    );
    t.notOk(
      fs.existsSync(path.join(s.config.PUBLIC_DIR, 'feeds')),
      'nothing of it under PUBLIC_DIR',
    );
    const exported = await s.request('GET', `/v1/feeds/${feed.id}/export`);
    t.equal(exported.status, 200, 'the authenticated export still serves it');

    // Whatever else lands in PUBLIC_DIR is not served either.
    fs.mkdirSync(path.join(s.config.PUBLIC_DIR, 'feeds'), { recursive: true });
    fs.writeFileSync(path.join(s.config.PUBLIC_DIR, 'feeds', 'stray.json'), '{"secret":true}');
    fs.writeFileSync(path.join(s.config.PUBLIC_DIR, 'stray.json'), '{"secret":true}');
    for (const p of ['/feeds/stray.json', '/stray.json', '/feeds/', `/feeds/${feed.id}.json`]) {
      const res = await fetch(`${s.server.discovery.url}${p}`);
      t.equal(res.status, 404, `${p} is not served`);
      t.notMatch(await res.text(), /secret/);
    }
    const index = await fetch(`${s.server.discovery.url}/v1/index.json`);
    t.equal(index.status, 200, 'the registry is');
    t.equal((await fetch(`${s.server.discovery.url}/`)).status, 200);
  },
);
