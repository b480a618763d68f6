import { spawn } from 'node:child_process';
import t from 'tap';
import { MAIN, runCliAsync } from '../support/cli.js';
import { signInDashboard } from '../support/dashboard.js';
import { startFeedServer } from '../support/feed-server.js';
import { tableRows } from '../support/html.js';
import { eventsAfter, feedProduct, jsonl, lastEventSeq } from '../support/integrations.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { INTERRUPTED } from '../../src/domain/integrations/sync.js';
import { FEED_SETTING_FORMATS } from '../../src/domain/integrations/schemas.js';
import { FEED_FORMATS } from '../../src/platforms/feed-records.js';

/**
 * Issue 20: a sync never wipes or half-changes the catalogue. Each finding replayed: an empty
 * feed is held; a drop over max_drop is held until forced; a feed over its size cap after
 * thousands of rows fails with nothing applied and nothing announced; a SIGKILL in the middle
 * of a sync leaves the catalogue as it was; settings are checked at the door; a URL's
 * user:password moves into the credentials and is never shown again.
 */

const PRIVATE = { ALLOW_PRIVATE_TARGETS: 'true' };

async function createFeed(s: TestServer, settings: Record<string, unknown>): Promise<string> {
  const res = await s.request('POST', '/v1/integrations', { body: { platform: 'feed', settings } });
  if (res.status !== 201) throw new Error(`create answered ${res.status}: ${res.text}`);
  return res.body.id as string;
}

/** Starts a sync through the API (with a body, or none) and waits for it to end. */
async function sync(s: TestServer, id: string, body?: unknown): Promise<any> {
  const res = await s.request('POST', `/v1/integrations/${id}/sync`, {
    ...(body !== undefined ? { body } : {}),
  });
  if (res.status !== 202) throw new Error(`sync answered ${res.status}: ${res.text}`);
  return s.server.deps.integrations!.settled(res.body.id);
}

async function catalogue(
  s: TestServer,
): Promise<Record<string, { price: number; status: string }>> {
  const products = (await s.request('GET', '/v1/products?limit=250')).body.products as any[];
  return Object.fromEntries(
    products.map((p) => [p.name as string, { price: p.price as number, status: p.status }]),
  );
}

const productEvents = (events: { type: string }[]) =>
  events.filter((e) => e.type.startsWith('product.'));

async function stagedRows(s: TestServer): Promise<number> {
  const row = await s.server.store.db
    .selectFrom('sync_staged_items')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

t.test('a feed replaced by an empty file is held: the catalogue is unchanged', async (t) => {
  const feeds = await startFeedServer(t);
  const server = await startTestServer(t, PRIVATE);
  const db = server.server.store.db;
  feeds.set('/p.jsonl', jsonl(['E1', 'E2'].map((id) => feedProduct(id))));
  const id = await createFeed(server, { url: feeds.url('/p.jsonl') });
  t.match(await sync(server, id), { status: 'succeeded', created: 2 });
  const before = await catalogue(server);

  feeds.set('/p.jsonl', { body: '', contentType: 'application/jsonl' });
  const seq = await lastEventSeq(db);
  const held = await sync(server, id);
  t.match(held, { status: 'held', fetched: 0, created: 0, updated: 0, deactivated: 2 });
  t.match(held.error, /listed no item.*all 2 of the integration's active products inactive/);
  t.same(await catalogue(server), before, 'every product as it was');
  const events = await eventsAfter(db, seq);
  t.same(
    events.map((e) => e.type),
    ['integration.sync.held'],
    'integration.sync.held, and no product event',
  );
  t.match(events[0]!.data, { id: held.id, status: 'held', deactivated: 2 });

  // The history and the status show it; the integration is not in error.
  const history = await server.request('GET', `/v1/integrations/${id}/sync/history`);
  t.match(history.body.syncs[0], { id: held.id, status: 'held', error: held.error });
  const heldOnly = await server.request('GET', `/v1/integrations/${id}/sync/history?status=held`);
  t.same(
    heldOnly.body.syncs.map((r: { id: string }) => r.id),
    [held.id],
    'the history lists one state',
  );
  t.equal(heldOnly.body.pagination.total, 1);
  const status = await server.request('GET', `/v1/integrations/${id}/sync/status`);
  t.match(status.body, { status: 'idle', last: { id: held.id, status: 'held' } });
  const integration = await server.request('GET', `/v1/integrations/${id}`);
  t.match(integration.body, { status: 'connected', product_count: 2, last_error: null });
  t.equal(await stagedRows(server), 0, 'nothing left staged');

  // The dashboard shows the held run, what it would change and why, with a button that
  // applies it (a forced sync, CSRF-checked, write level).
  const dash = await signInDashboard(server, server.keys.admin);
  const page = await dash.get(`/dashboard/integrations/${id}`);
  t.equal(page.status, 200);
  t.match(page.text, /id="sync-held"/);
  t.match(page.text, /listed no item/);
  t.match(page.text, /would have made 0 new,\s+0 updated and 2 inactive/);
  t.match(page.text, /name="force" value="true"/);
  const reader = await signInDashboard(server, server.keys.read_only);
  const readerPage = await reader.get(`/dashboard/integrations/${id}`);
  t.match(readerPage.text, /id="sync-held"/);
  const succeeded = await reader.get(`/dashboard/integrations/${id}?status=succeeded`);
  const states = tableRows(succeeded.text, 'id="syncs"').map((r) => r[1]);
  t.ok(states.length > 0, 'the succeeded syncs are listed');
  t.ok(
    states.every((s) => s === 'succeeded'),
    `only succeeded syncs: ${states.join(', ')}`,
  );
  t.match(succeeded.text, '<option selected value="succeeded">succeeded</option>');
  t.notMatch(readerPage.text, /name="force"/, 'a read-only viewer sees no button');
  const noCsrf = await dash.post(
    `/dashboard/integrations/${id}/sync`,
    { force: 'true' },
    { csrf: null },
  );
  t.equal(noCsrf.status, 403, 'the button needs the CSRF token');
  const applied = await dash.post(`/dashboard/integrations/${id}/sync`, { force: 'true' });
  t.equal(applied.status, 303);
  const forcedRow = await db
    .selectFrom('sync_runs')
    .selectAll()
    .where('integration_id', '=', id)
    .orderBy('started_at', 'desc')
    .orderBy('id', 'desc')
    .executeTakeFirstOrThrow();
  const forced = await server.server.deps.integrations!.settled(forcedRow.id);
  t.match(forced, { status: 'succeeded', trigger: 'api (force)', deactivated: 2 });
  t.same(
    Object.values(await catalogue(server)).map((p) => p.status),
    ['inactive', 'inactive'],
    'forced: the empty feed is applied',
  );
});

t.test('a drop over max_drop is held, then a forced sync applies it', async (t) => {
  const feeds = await startFeedServer(t);
  const server = await startTestServer(t, PRIVATE);
  const db = server.server.store.db;
  const ids = Array.from({ length: 10 }, (_, i) => `D${i + 1}`);
  feeds.set('/p.jsonl', jsonl(ids.map((id) => feedProduct(id))));
  const id = await createFeed(server, { url: feeds.url('/p.jsonl') });
  t.match(await sync(server, id), { status: 'succeeded', created: 10 });

  // Two gone of ten (20%): within the default max_drop, applied.
  feeds.set('/p.jsonl', jsonl(ids.slice(0, 8).map((id) => feedProduct(id))));
  t.match(await sync(server, id), { status: 'succeeded', deactivated: 2 });

  // Three more gone of the eight active (37.5%), one new and one changed: held, nothing
  // applied, with the counts it would have applied.
  const next = [
    ...ids.slice(0, 4).map((id) => feedProduct(id)),
    feedProduct('D5', { price: '25.00 USD' }),
    feedProduct('N1'),
  ];
  feeds.set('/p.jsonl', jsonl(next));
  const before = await catalogue(server);
  const seq = await lastEventSeq(db);
  const held = await sync(server, id);
  t.match(held, {
    status: 'held',
    fetched: 6,
    created: 1,
    updated: 1,
    unchanged: 4,
    deactivated: 3,
  });
  t.match(
    held.error,
    /would make 3 of the integration's 8 active products inactive \(37.5%\), more than settings.max_drop \(20%\)/,
  );
  t.same(await catalogue(server), before, 'nothing applied');
  t.same(
    (await eventsAfter(db, seq)).map((e) => e.type),
    ['integration.sync.held'],
  );
  // A held run keeps no feed validators: the next sync reads the feed again (no 304).
  const again = await sync(server, id);
  t.match(again, { status: 'held', fetched: 6, deactivated: 3 });

  // {"force": true} applies it; a body that is not {force: boolean} is refused by name.
  const bad = await server.request('POST', `/v1/integrations/${id}/sync`, {
    body: { force: 'yes' },
    headers: { prefer: 'envelope' },
  });
  t.equal(bad.status, 422);
  t.equal(bad.body.error.details.field, 'force');
  const seq2 = await lastEventSeq(db);
  const forced = await sync(server, id, { force: true });
  t.match(forced, { status: 'succeeded', created: 1, updated: 1, deactivated: 3 });
  const after = await catalogue(server);
  t.equal(after['Product D5']!.price, 25);
  t.equal(after['Product N1']!.status, 'active');
  t.equal(after['Product D6']!.status, 'inactive');
  t.equal(
    productEvents(await eventsAfter(db, seq2)).length,
    5,
    'one created, one updated, three made inactive',
  );

  // max_drop 0: any drop is held; max_drop 1: none is.
  const put = await server.request('PUT', `/v1/integrations/${id}`, {
    body: { settings: { url: feeds.url('/p.jsonl'), max_drop: 0 } },
  });
  t.equal(put.status, 200, put.text);
  feeds.set('/p.jsonl', jsonl(next.slice(0, 5)));
  t.match(await sync(server, id), { status: 'held', deactivated: 1 });

  // The CLI: held again (exit 4), then `--force` applies it (exit 0).
  const env = {
    DATA_DIR: server.dir,
    ...PRIVATE,
    ...(server.config.DATABASE_URL ? { DATABASE_URL: server.config.DATABASE_URL } : {}),
  };
  const cliHeld = await runCliAsync(['integrations', 'sync', id, '--json'], env);
  t.equal(cliHeld.status, 4, cliHeld.stderr);
  t.match(JSON.parse(cliHeld.stdout), { status: 'held', trigger: 'cli', deactivated: 1 });
  const cliForced = await runCliAsync(['integrations', 'sync', id, '--force', '--json'], env);
  t.equal(cliForced.status, 0, cliForced.stderr);
  t.match(JSON.parse(cliForced.stdout), {
    status: 'succeeded',
    trigger: 'cli (force)',
    deactivated: 1,
  });
  t.equal((await catalogue(server))['Product N1']!.status, 'inactive');

  await server.request('PUT', `/v1/integrations/${id}`, {
    body: { settings: { url: feeds.url('/p.jsonl'), max_drop: 1 } },
  });
  feeds.set('/p.jsonl', jsonl(next.slice(0, 1)));
  t.match(await sync(server, id), { status: 'succeeded', deactivated: 4 });
});

t.test(
  'a CSV over max_bytes after thousands of rows fails: nothing created, nothing announced',
  async (t) => {
    const feeds = await startFeedServer(t);
    const server = await startTestServer(t, PRIVATE);
    const db = server.server.store.db;
    // A subscriber to every event: a product event would make a delivery.
    const hook = await server.request('POST', '/v1/webhooks', {
      body: { url: 'http://127.0.0.1:9/hook' },
    });
    t.equal(hook.status, 201, hook.text);
    feeds.generate('/big.csv', { bytes: 400_000 });
    const id = await createFeed(server, { url: feeds.url('/big.csv'), max_bytes: 300_000 });
    const seq = await lastEventSeq(db);
    const run = await sync(server, id);
    t.match(run, { status: 'failed', created: 0, updated: 0, deactivated: 0 });
    t.match(run.error, /300000-byte cap/);
    t.same(await catalogue(server), {}, 'none of those products exists');
    const events = await eventsAfter(db, seq);
    t.same(
      events.map((e) => e.type),
      ['integration.sync.failed'],
    );
    const deliveries = await db.selectFrom('webhook_deliveries').select('event_type').execute();
    t.same(
      deliveries.filter((d) => d.event_type.startsWith('product.')),
      [],
      'no product delivery',
    );
    t.equal(await stagedRows(server), 0, 'nothing left staged');
  },
);

t.test('a sync past settings.timeout_s fails with nothing applied', async (t) => {
  const feeds = await startFeedServer(t);
  const server = await startTestServer(t, PRIVATE);
  feeds.set('/p.jsonl', jsonl(['T1', 'T2'].map((id) => feedProduct(id))));
  const id = await createFeed(server, { url: feeds.url('/p.jsonl'), timeout_s: 1 });
  t.match(await sync(server, id), { status: 'succeeded', created: 2 });
  const before = await catalogue(server);
  const lines = ['T1', 'T2', 'T3', 'T4'].map((id) => feedProduct(id, { price: '5.00 USD' }));
  const body = jsonl(lines);
  feeds.set('/p.jsonl', body);
  // Three whole lines arrive, then nothing: the deadline ends the run.
  feeds.stall('/p.jsonl', body.indexOf('\n', body.indexOf('T3')) + 1);
  const run = await sync(server, id);
  t.match(run, { status: 'failed', created: 0, updated: 0 });
  t.match(run.error, /time limit of 1 s \(settings\.timeout_s\)/);
  t.same(await catalogue(server), before);
});

t.test('settings are checked on create and update: 422 naming the field', async (t) => {
  const feeds = await startFeedServer(t);
  const server = await startTestServer(t, PRIVATE);
  const url = feeds.url('/f.csv');
  const cases: [Record<string, unknown>, string][] = [
    [{ platform: 'feed', settings: { url, max_bytes: -1 } }, 'settings.max_bytes'],
    [{ platform: 'feed', settings: { url, max_bytes: 1e300 } }, 'settings.max_bytes'],
    [{ platform: 'feed', settings: { url, max_bytes: 1.5 } }, 'settings.max_bytes'],
    [{ platform: 'feed', settings: { url, max_bytes: '100' } }, 'settings.max_bytes'],
    [{ platform: 'feed', settings: { url, format: 'pdf' } }, 'settings.format'],
    [{ platform: 'feed', settings: { url, colour: 'red' } }, 'settings.colour'],
    [{ platform: 'feed', settings: { url: 'http:///x' } }, 'settings.url'],
    [{ platform: 'feed', settings: { url: 'http:/x/feed.csv' } }, 'settings.url'],
    [{ platform: 'feed', settings: { url, timeout_s: 0 } }, 'settings.timeout_s'],
    [{ platform: 'feed', settings: { url, timeout_s: 86_401 } }, 'settings.timeout_s'],
    [{ platform: 'feed', settings: { url, max_drop: 1.5 } }, 'settings.max_drop'],
    [{ platform: 'feed', settings: { url, max_drop: '0.5' } }, 'settings.max_drop'],
    [{ platform: 'feed', settings: { url, timeout_ms: 0 } }, 'settings.timeout_ms'],
    [{ platform: 'shopify', shop_domain: 'a.myshopify.com', settings: { url } }, 'settings.url'],
    [
      { platform: 'shopify', shop_domain: 'a.myshopify.com', settings: { bulk_threshold: -1 } },
      'settings.bulk_threshold',
    ],
    [
      { platform: 'shopify', shop_domain: 'a.myshopify.com', settings: { api_version: 'v2' } },
      'settings.api_version',
    ],
    [
      { platform: 'woocommerce', shop_domain: 'w.example.com', settings: { scheme: 'ftp' } },
      'settings.scheme',
    ],
    [
      { platform: 'woocommerce', shop_domain: 'w.example.com', settings: { bulk_threshold: 1 } },
      'settings.bulk_threshold',
    ],
  ];
  for (const [body, field] of cases) {
    const r = await server.request('POST', '/v1/integrations', {
      body,
      headers: { prefer: 'envelope' },
    });
    t.equal(r.status, 422, JSON.stringify(body));
    t.equal(r.body.error.details.field, field, JSON.stringify(body));
  }
  t.equal(
    (await server.request('GET', '/v1/integrations')).body.integrations.length,
    0,
    'none was created',
  );

  // Every setting the platforms read is taken.
  const good: Record<string, unknown>[] = [
    {
      platform: 'feed',
      settings: {
        url,
        max_bytes: 4 * 1024 * 1024 * 1024,
        format: 'csv',
        timeout_ms: 30_000,
        timeout_s: 3600,
        max_drop: 0,
      },
    },
    {
      platform: 'shopify',
      shop_domain: 'a.myshopify.com',
      settings: {
        api_version: '2026-04',
        bulk_threshold: 0,
        bulk_poll_seconds: 0.5,
        currency: 'EUR',
        scheme: 'https',
        max_drop: 1,
        timeout_s: 60,
      },
    },
    {
      platform: 'woocommerce',
      shop_domain: 'w.example.com',
      settings: { currency: 'GBP', scheme: 'http', max_drop: 0.5 },
    },
  ];
  for (const body of good) {
    const r = await server.request('POST', '/v1/integrations', { body });
    t.equal(r.status, 201, `${JSON.stringify(body)}: ${r.text}`);
  }

  // Update: the same checks; a refused update changes nothing.
  const id = await createFeed(server, { url });
  for (const [settings, field] of [
    [{ url, max_bytes: -1 }, 'settings.max_bytes'],
    [{ url: 'http:///x' }, 'settings.url'],
    [{ url, unknown_key: 1 }, 'settings.unknown_key'],
  ] as const) {
    const r = await server.request('PUT', `/v1/integrations/${id}`, {
      body: { settings },
      headers: { prefer: 'envelope' },
    });
    t.equal(r.status, 422, JSON.stringify(settings));
    t.equal(r.body.error.details.field, field);
  }
  t.same((await server.request('GET', `/v1/integrations/${id}`)).body.settings, { url });
});

t.test('a URL with user:password: moved into the credentials, never shown again', async (t) => {
  const feeds = await startFeedServer(t);
  const server = await startTestServer(t, PRIVATE);
  const db = server.server.store.db;
  feeds.set('/p.jsonl', jsonl([feedProduct('U1')]));
  const password = 'pa:ss@w0rd';
  const secretUrl = feeds
    .url('/p.jsonl')
    .replace('http://', `http://feeduser:${encodeURIComponent(password)}@`);
  const seq = await lastEventSeq(db);
  const created = await server.request('POST', '/v1/integrations', {
    body: { platform: 'feed', settings: { url: secretUrl } },
  });
  t.equal(created.status, 201, created.text);
  const id = created.body.id as string;
  const leaks = (text: string) =>
    text.includes(encodeURIComponent(password)) ||
    text.includes(password) ||
    text.includes('feeduser');
  t.equal(created.body.settings.url, feeds.url('/p.jsonl'), 'the URL without them');
  t.equal(created.body.shop_domain, new URL(feeds.origin).host);
  t.equal(created.body.credentials_set, true);
  t.notOk(leaks(created.text), 'not in the create answer');
  t.notOk(leaks((await server.request('GET', `/v1/integrations/${id}`)).text));
  t.notOk(leaks((await server.request('GET', '/v1/integrations')).text));
  const stored = await db
    .selectFrom('integrations')
    .selectAll()
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
  t.notOk(leaks(JSON.stringify(stored)), 'not in the store (encrypted)');

  // The sync sends them as HTTP Basic credentials.
  t.match(await sync(server, id), { status: 'succeeded', created: 1 });
  const sent = feeds.requests.filter((r) => r.path === '/p.jsonl').at(-1)!;
  t.equal(
    sent.headers.authorization,
    `Basic ${Buffer.from(`feeduser:${password}`).toString('base64')}`,
  );
  t.notOk(leaks(JSON.stringify(await eventsAfter(db, seq))), 'not in any event');
  const dash = await signInDashboard(server, server.keys.admin);
  t.notOk(leaks((await dash.get('/dashboard/integrations')).text), 'not on the list page');
  t.notOk(leaks((await dash.get(`/dashboard/integrations/${id}`)).text), 'not on its page');

  // An update with new ones replaces them, and keeps the other credentials.
  const updated = await server.request('PUT', `/v1/integrations/${id}`, {
    body: {
      settings: { url: feeds.url('/p.jsonl').replace('http://', 'http://other:n3w@') },
    },
  });
  t.equal(updated.status, 200, updated.text);
  t.equal(updated.body.settings.url, feeds.url('/p.jsonl'));
  t.notMatch(updated.text, /n3w/);
  await sync(server, id);
  t.equal(
    feeds.requests.filter((r) => r.path === '/p.jsonl').at(-1)!.headers.authorization,
    `Basic ${Buffer.from('other:n3w').toString('base64')}`,
  );

  // Given twice (in the URL and in credentials): refused by name.
  const twice = await server.request('POST', '/v1/integrations', {
    body: {
      platform: 'feed',
      settings: { url: secretUrl },
      credentials: { username: 'a', password: 'b' },
    },
    headers: { prefer: 'envelope' },
  });
  t.equal(twice.status, 422);
  t.equal(twice.body.error.details.field, 'settings.url');
  t.notOk(leaks(twice.text), 'nor in an error');
});

t.test('a sync SIGKILLed mid-run changes nothing; the next process recovers the run', async (t) => {
  const feeds = await startFeedServer(t);
  const server = await startTestServer(t, PRIVATE);
  const db = server.server.store.db;
  const ids = Array.from({ length: 10 }, (_, i) => `K${i + 1}`);
  feeds.set('/p.jsonl', jsonl(ids.map((id) => feedProduct(id))));
  const id = await createFeed(server, { url: feeds.url('/p.jsonl') });
  t.match(await sync(server, id), { status: 'succeeded', created: 10 });
  const before = await catalogue(server);

  // The next version changes every price and adds ten; the server stalls after 14 lines.
  const next = [...ids, ...ids.map((i) => `${i}-new`)].map((i) =>
    feedProduct(i, { price: '1.00 USD' }),
  );
  const body = jsonl(next);
  let cut = 0;
  for (let i = 0; i < 14; i++) cut = body.indexOf('\n', cut) + 1;
  feeds.set('/p.jsonl', body);
  feeds.stall('/p.jsonl', cut);

  const seq = await lastEventSeq(db);
  const env: Record<string, string> = {
    ...process.env,
    LOG_LEVEL: 'warn',
    DATA_DIR: server.dir,
    ...PRIVATE,
    SYNC_BATCH_SIZE: '2',
    ...(server.config.DATABASE_URL ? { DATABASE_URL: server.config.DATABASE_URL } : {}),
  } as Record<string, string>;
  const child = spawn(process.execPath, [MAIN, 'integrations', 'sync', id], {
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const ended = new Promise<NodeJS.Signals | null>((resolve) =>
    child.once('close', (_code, signal) => resolve(signal)),
  );
  // Wait until the child has staged what arrived (14 items, in batches of 2).
  const running = async () =>
    db
      .selectFrom('sync_runs')
      .selectAll()
      .where('integration_id', '=', id)
      .where('status', '=', 'running')
      .executeTakeFirst();
  const deadline = Date.now() + 60_000;
  let row = await running();
  while (!row || Number(row.fetched) < 14) {
    if (Date.now() > deadline || child.exitCode !== null)
      throw new Error(`the child never staged 14 items: ${stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    row = await running();
  }
  t.equal(row.pid, child.pid);
  t.ok((await stagedRows(server)) >= 14, 'what it read is staged');
  child.kill('SIGKILL');
  t.equal(await ended, 'SIGKILL');

  t.same(await catalogue(server), before, 'every product as it was');
  t.same(productEvents(await eventsAfter(db, seq)), [], 'no product event');

  // The next process (here the CLI's start) marks the run failed and drops what it staged.
  const listed = await runCliAsync(['integrations', 'list', '--json'], env);
  t.equal(listed.status, 0, listed.stderr);
  const last = await db
    .selectFrom('sync_runs')
    .selectAll()
    .where('id', '=', row.id)
    .executeTakeFirstOrThrow();
  t.match(last, { status: 'failed', error: INTERRUPTED, created: 0, updated: 0 });
  t.equal(await stagedRows(server), 0, 'nothing left staged');
  t.same(
    (await eventsAfter(db, seq)).map((e) => e.type),
    ['integration.sync.failed'],
  );

  // Healed: the next sync applies the whole new version.
  feeds.heal('/p.jsonl');
  const done = await sync(server, id, { force: false });
  t.match(done, { status: 'succeeded', fetched: 20, created: 10, updated: 10 });
});

t.test('settings.format takes every format the feed reader reads, and only those', async (t) => {
  t.same([...FEED_SETTING_FORMATS].sort(), [...FEED_FORMATS].sort());
});
