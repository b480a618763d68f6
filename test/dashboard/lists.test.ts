import t from 'tap';
import { signInDashboard } from '../support/dashboard.js';
import { tableRows } from '../support/html.js';
import { startTestServer } from '../support/server.js';

/** The pager's text and the addresses of its links, as a reader follows them. */
function pagerOf(page: string): { text: string; links: Record<string, string> } {
  const pager = /<div class="pager">([\s\S]*?)<\/div>/.exec(page)?.[1] ?? '';
  const links = Object.fromEntries(
    [...pager.matchAll(/<a href="([^"]+)">([^<]+)<\/a>/g)].map((m) => [
      m[2]!,
      m[1]!.replace(/&amp;/g, '&'),
    ]),
  );
  return { text: /<span>([^<]*)<\/span>/.exec(pager)?.[1] ?? '', links };
}

t.test('every list pages: feeds, webhooks and the audit log keep their filters', async (t) => {
  const s = await startTestServer(t, { ALLOW_PRIVATE_TARGETS: 'true' });
  for (const name of ['One', 'Two', 'Three']) {
    const res = await s.request('POST', '/v1/feeds', { body: { name, format: 'json' } });
    t.equal(res.status, 201, res.text);
  }
  for (const n of [1, 2, 3]) {
    const res = await s.request('POST', '/v1/webhooks', {
      body: { url: `http://127.0.0.1:9/hook-${n}` },
    });
    t.equal(res.status, 201, res.text);
  }
  const dash = await signInDashboard(s, s.keys.admin);

  const feeds = await dash.get('/dashboard/feeds?limit=2');
  t.same(
    tableRows(feeds.text).map((r) => r.slice(1, 3)),
    [
      ['agentshelf', 'json'],
      ['agentshelf', 'json'],
    ],
    'two feeds, with their channel',
  );
  t.same(pagerOf(feeds.text), {
    text: '1–2 of 3',
    links: { Next: '/dashboard/feeds?limit=2&offset=2' },
  });
  const lastFeeds = await dash.get('/dashboard/feeds?limit=2&offset=2');
  t.equal(tableRows(lastFeeds.text).length, 1);
  t.same(pagerOf(lastFeeds.text), {
    text: '3–3 of 3',
    links: { Previous: '/dashboard/feeds?limit=2' },
  });

  const hooks = await dash.get('/dashboard/webhooks?limit=2');
  t.equal(tableRows(hooks.text).length, 2);
  t.same(pagerOf(hooks.text), {
    text: '1–2 of 3',
    links: { Next: '/dashboard/webhooks?limit=2&offset=2' },
  });

  const audit = await dash.get('/dashboard/settings/api-keys?status=201&limit=2');
  const pager = pagerOf(audit.text);
  t.equal(pager.text, '1–2 of 6', 'the six creates above');
  t.same(pager.links, {
    Next: '/dashboard/settings/api-keys?status=201&limit=2&offset=2#audit',
  });
});
