import t from 'tap';
import { productBody, startTestServer } from '../support/server.js';
import { signInDashboard } from '../support/dashboard.js';
import { HOSTILE_NAMES } from '../support/reports.js';
import { clockAt } from '../support/clock.js';
import { startReceiver } from '../support/receiver.js';

t.test('every answer is no-store, under a strict CSP, nosniff', async (t) => {
  const s = await startTestServer(t);
  const admin = await signInDashboard(s, s.keys.admin);
  const pages = [
    '/dashboard/sign-in',
    '/dashboard/products',
    '/dashboard/products/new',
    '/dashboard/feeds',
    '/dashboard/integrations',
    '/dashboard/webhooks',
    '/dashboard/analytics',
    '/dashboard/discovery',
    '/dashboard/settings/api-keys',
    '/dashboard/nowhere',
  ];
  for (const path of pages) {
    const res =
      path === '/dashboard/sign-in'
        ? await fetch(s.url + path).then(async (r) => ({
            status: r.status,
            headers: r.headers,
            text: await r.text(),
          }))
        : await admin.get(path);
    t.equal(res.headers.get('cache-control'), 'no-store', path);
    const csp = res.headers.get('content-security-policy') ?? '';
    t.match(csp, /default-src 'none'/, path);
    t.match(csp, /frame-ancestors 'none'/, path);
    t.notMatch(csp, /unsafe-inline/, path);
    t.equal(res.headers.get('x-content-type-options'), 'nosniff', path);
    t.equal(res.status, path === '/dashboard/nowhere' ? 404 : 200, path);
    t.notMatch(res.text, /style="/, `${path}: no inline style attributes`);
    t.notMatch(res.text, /<script>|<script [^>]*>[^<]/, `${path}: no inline script`);
  }
});

t.test(
  'the session cookie: HttpOnly, SameSite=Strict, holds the key id, never the key',
  async (t) => {
    const s = await startTestServer(t);
    const res = await fetch(`${s.url}/dashboard/sign-in`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ key: s.keys.read_only }).toString(),
      redirect: 'manual',
    });
    t.equal(res.status, 303);
    const set = res.headers.get('set-cookie') ?? '';
    t.match(set, /HttpOnly/);
    t.match(set, /SameSite=Strict/);
    t.notMatch(set, /Secure/, 'not Secure over http');
    t.notOk(set.includes(s.keys.read_only), 'the key is not in the cookie');
    t.match(set, /agentshelf_session=key_/);
    // Forged: the same id with another signature, or a changed id.
    const value = set.split(';')[0]!;
    const forged = value.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A'));
    const r = await fetch(`${s.url}/dashboard/products`, {
      headers: { cookie: forged },
      redirect: 'manual',
    });
    t.equal(r.status, 303);
    t.equal(r.headers.get('location'), '/dashboard/sign-in');
    // Not signed in at all.
    const anon = await fetch(`${s.url}/dashboard/settings/api-keys`, { redirect: 'manual' });
    t.equal(anon.status, 303);
  },
);

t.test('Secure cookie when BASE_URL is https', async (t) => {
  const s = await startTestServer(t, { BASE_URL: 'https://shop.example.com' });
  const res = await fetch(`${s.url}/dashboard/sign-in`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ key: s.keys.admin }).toString(),
    redirect: 'manual',
  });
  t.match(res.headers.get('set-cookie') ?? '', /; Secure/);
});

t.test(
  'a form posted without its CSRF token, or with another session’s, is 403 and changes nothing',
  async (t) => {
    const s = await startTestServer(t);
    const rw = await signInDashboard(s, s.keys.read_write);
    const other = await signInDashboard(s, s.keys.admin);
    const fields = { name: 'Posted', price: '10' };
    const missing = await rw.post('/dashboard/products', fields, { csrf: null });
    t.equal(missing.status, 403);
    t.match(missing.text, /Nothing was changed/);
    const foreign = await rw.post('/dashboard/products', fields, { csrf: await other.csrf() });
    t.equal(foreign.status, 403);
    const keyForm = await other.post(
      '/dashboard/settings/api-keys',
      { level: 'admin' },
      { csrf: 'x' },
    );
    t.equal(keyForm.status, 403);
    t.equal((await s.request('GET', '/v1/products')).body.pagination.total, 0, 'no product made');
    t.equal((await s.request('GET', '/v1/api-keys')).body.api_keys.length, 3, 'no key made');
    // With the token it works.
    const ok = await rw.post('/dashboard/products', fields);
    t.equal(ok.status, 303);
    t.equal((await s.request('GET', '/v1/products')).body.pagination.total, 1);
  },
);

t.test('a read_only session cannot write; read_write cannot manage keys', async (t) => {
  const s = await startTestServer(t);
  const created = await s.request('POST', '/v1/products', { body: productBody({ id: 'p1' }) });
  t.equal(created.status, 201);
  const ro = await signInDashboard(s, s.keys.read_only);
  const list = await ro.get('/dashboard/products');
  t.equal(list.status, 200);
  t.match(list.text, /Trail Shoe/);
  t.notMatch(list.text, /Add a product/, 'no write forms for read_only');
  const page = await ro.get('/dashboard/products/p1');
  t.notMatch(page.text, /Delete product/);
  const csrf = await ro.csrf();
  for (const [path, fields] of [
    ['/dashboard/products', { name: 'Nope', price: '1' }],
    ['/dashboard/products/p1', { name: 'Renamed', price: '1' }],
    ['/dashboard/products/p1/delete', {}],
    ['/dashboard/feeds', { name: 'F', format: 'json' }],
    ['/dashboard/settings/api-keys', { level: 'admin' }],
  ] as const) {
    const res = await ro.post(path, fields, { csrf });
    t.equal(res.status, 403, path);
  }
  const after = await s.request('GET', '/v1/products/p1');
  t.equal(after.body.name, 'Trail Shoe', 'unchanged');
  t.equal((await s.request('GET', '/v1/products')).body.pagination.total, 1);
  t.equal((await s.request('GET', '/v1/feeds')).body.feeds.length, 0);
  const rw = await signInDashboard(s, s.keys.read_write);
  t.equal((await rw.get('/dashboard/settings/api-keys')).status, 403);
  t.equal((await rw.post('/dashboard/settings/api-keys', { level: 'admin' })).status, 403);
  t.equal((await s.request('GET', '/v1/api-keys')).body.api_keys.length, 3);
});

t.test('a revoked key’s session is signed out on its next request', async (t) => {
  const s = await startTestServer(t);
  const key = await s.createKey('read_write');
  const dash = await signInDashboard(s, key.secret);
  t.equal((await dash.get('/dashboard/products')).status, 200);
  t.equal((await s.request('DELETE', `/v1/api-keys/${key.id}`)).status, 200);
  const res = await dash.get('/dashboard/products');
  t.equal(res.status, 303);
  t.equal(res.headers.get('location'), '/dashboard/sign-in');
  t.match(res.headers.get('set-cookie') ?? '', /Max-Age=0/, 'the cookie is cleared');
  // And signing in again with it is refused.
  const again = await fetch(`${s.url}/dashboard/sign-in`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ key: key.secret }).toString(),
    redirect: 'manual',
  });
  t.equal(again.status, 401);
  t.match(await again.text(), /revoked/);
});

t.test('a key generated in the dashboard is shown once; revoking it works', async (t) => {
  const s = await startTestServer(t);
  const admin = await signInDashboard(s, s.keys.admin);
  const res = await admin.post('/dashboard/settings/api-keys', {
    name: 'Connector',
    level: 'read_only',
    plan: '',
  });
  t.equal(res.status, 201);
  const secret = /id="new-key">([^<]+)</.exec(res.text)?.[1];
  t.ok(secret, 'the secret is on the page');
  const keys = (await s.request('GET', '/v1/api-keys')).body.api_keys as {
    id: string;
    name: string;
  }[];
  const made = keys.find((k) => k.name === 'Connector')!;
  t.ok(made);
  t.equal((await s.request('GET', '/v1/products', { key: secret! })).status, 200, 'the key works');
  const list = await admin.get('/dashboard/settings/api-keys');
  t.notOk(list.text.includes(secret!), 'never shown again');
  const bad = await admin.post('/dashboard/settings/api-keys', {
    name: 'x'.repeat(101),
    level: 'read_only',
  });
  t.equal(bad.status, 422);
  t.match(bad.text, /field-error/);
  const revoked = await admin.post(`/dashboard/settings/api-keys/${made.id}/revoke`, {});
  t.equal(revoked.status, 200);
  t.equal((await s.request('GET', '/v1/products', { key: secret! })).status, 401);
});

t.test('hostile product names are escaped on every page that shows them', async (t) => {
  const s = await startTestServer(t);
  const ids: string[] = [];
  for (const [i, name] of HOSTILE_NAMES.entries()) {
    const res = await s.request('POST', '/v1/products', {
      body: productBody({ id: `h${i}`, name, description: name }),
    });
    t.equal(res.status, 201, name);
    ids.push(`h${i}`);
  }
  await s.request('POST', '/v1/feeds', { body: { name: HOSTILE_NAMES[0], format: 'json' } });
  const dash = await signInDashboard(s, s.keys.admin);
  const pages = [
    '/dashboard/products',
    '/dashboard/feeds',
    ...ids.map((id) => `/dashboard/products/${id}`),
    `/dashboard/products?category=${encodeURIComponent('<script>x</script>')}`,
  ];
  for (const path of pages) {
    const res = await dash.get(path);
    t.equal(res.status, 200, path);
    t.notMatch(res.text, /<script>document/, `${path}: no raw script`);
    t.notMatch(res.text, /<img src="http:\/\/127/, `${path}: no raw img`);
    t.notMatch(res.text, /<script>x/, `${path}: query echoed escaped`);
  }
  const list = (await dash.get('/dashboard/products')).text;
  t.match(list, /&lt;script&gt;document.title=&quot;pwned&quot;&lt;\/script&gt;/);
  t.match(list, /Quote &quot; and apostrophe &#39; &amp; ampersand/);
  t.ok(list.includes('Emoji 👟🔥 trail shoe'), 'emoji kept');
  t.ok(list.includes('נעל ריצה'), 'right-to-left text kept');
  const edit = (await dash.get('/dashboard/products/h0')).text;
  t.match(
    edit,
    /value="&lt;script&gt;document.title=&quot;pwned&quot;&lt;\/script&gt;"/,
    'escaped in the form value',
  );
});

t.test('products: field errors beside the field from the API’s validation', async (t) => {
  const s = await startTestServer(t);
  const dash = await signInDashboard(s, s.keys.read_write);
  const res = await dash.post('/dashboard/products', { name: 'Shoe', price: 'abc' });
  t.equal(res.status, 422);
  t.match(res.text, /id="f-price"[^>]*aria-invalid="true"/);
  t.match(res.text, /<p class="field-error" id="f-price-error">price must be [^<]+<\/p>/);
  t.match(res.text, /value="Shoe"/, 'what was typed is kept');
  const empty = await dash.post('/dashboard/products', { name: '', price: '5' });
  t.equal(empty.status, 422);
  t.match(empty.text, /f-name-error/);
  t.equal((await s.request('GET', '/v1/products')).body.pagination.total, 0);

  // An edit: the fields as the form sends them; emptied description and category are cleared.
  t.equal(
    (
      await s.request('POST', '/v1/products', {
        body: productBody({ id: 'e1', description: 'Old' }),
      })
    ).status,
    201,
  );
  const saved = await dash.post('/dashboard/products/e1', {
    name: 'Edited',
    description: '',
    price: '12.5',
    currency: 'USD',
    status: 'draft',
    category: '',
    images: 'https://img.example.com/1.jpg\r\nhttps://img.example.com/2.jpg',
  });
  t.equal(saved.status, 303);
  const after = (await s.request('GET', '/v1/products/e1')).body;
  t.match(after, {
    name: 'Edited',
    description: null,
    price: 12.5,
    status: 'draft',
    category: null,
    images: ['https://img.example.com/1.jpg', 'https://img.example.com/2.jpg'],
    attributes: { brand: 'Northwind' },
  });
  const wrong = await dash.post('/dashboard/products/e1', {
    name: 'X',
    price: '1',
    images: 'not a url',
  });
  t.equal(wrong.status, 422);
  t.match(wrong.text, /f-images-error/);
  t.equal((await s.request('GET', '/v1/products/e1')).body.name, 'Edited', 'nothing half-written');
});

t.test('failed sign-ins are limited per client address', async (t) => {
  const s = await startTestServer(t);
  const attempt = (key: string) =>
    fetch(`${s.url}/dashboard/sign-in`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ key }).toString(),
      redirect: 'manual',
    });
  for (let i = 0; i < 10; i++) t.equal((await attempt(`ask_test_wrong${i}`)).status, 401);
  const limited = await attempt('ask_test_wrong');
  t.equal(limited.status, 429);
  t.ok(Number(limited.headers.get('retry-after')) > 0);
  t.equal((await attempt(s.keys.admin)).status, 429, 'even a good key waits');
  // The API is not affected.
  t.equal((await s.request('GET', '/v1/products')).status, 200);
});

t.test(
  'a session expires after 12 hours; the sign-in limit forgets after 15 minutes',
  async (t) => {
    const clock = clockAt('2026-11-20T08:00:00Z');
    const s = await startTestServer(t, {}, { now: clock.now });
    const dash = await signInDashboard(s, s.keys.read_only);
    clock.advance(12 * 3600 - 1);
    t.equal((await dash.get('/dashboard/products')).status, 200, 'still signed in');
    clock.advance(1);
    const expired = await dash.get('/dashboard/products');
    t.equal(expired.status, 303, 'expired');
    t.equal(expired.headers.get('location'), '/dashboard/sign-in');

    const attempt = (key: string) =>
      fetch(`${s.url}/dashboard/sign-in`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ key }).toString(),
        redirect: 'manual',
      });
    for (let i = 0; i < 10; i++) await attempt('wrong');
    t.equal((await attempt(s.keys.admin)).status, 429);
    clock.advance(15 * 60);
    t.equal((await attempt(s.keys.admin)).status, 303, 'allowed again');
  },
);

t.test('a hostile key name is escaped on the keys page', async (t) => {
  const s = await startTestServer(t);
  await s.createKey('read_only', { name: '<script>alert(1)</script> "k" 👟 נעל' });
  const dash = await signInDashboard(s, s.keys.admin);
  const page = (await dash.get('/dashboard/settings/api-keys')).text;
  t.notMatch(page, /<script>alert/);
  t.match(page, /&lt;script&gt;alert\(1\)&lt;\/script&gt; &quot;k&quot; 👟 נעל/);
});

t.test(
  'webhooks: the secret is shown once; a failed test delivery is retried from the log',
  async (t) => {
    const s = await startTestServer(t, { ALLOW_PRIVATE_TARGETS: 'true' });
    let status = 500;
    const receiver = await startReceiver(t, () => ({ status, body: 'x' }));
    const dash = await signInDashboard(s, s.keys.read_write);
    const bad = await dash.post('/dashboard/webhooks', { url: 'not a url', events: '' });
    t.equal(bad.status, 422);
    t.match(bad.text, /f-url-error/);
    const created = await dash.post('/dashboard/webhooks', {
      url: receiver.url,
      events: 'product.created',
    });
    t.equal(created.status, 201);
    const secret = /id="new-secret">([^<]+)</.exec(created.text)?.[1];
    t.ok(secret, 'the secret is shown');
    const hook = (await s.request('GET', '/v1/webhooks')).body.webhooks[0];
    t.same(hook.events, ['product.created']);
    const page = await dash.get(`/dashboard/webhooks/${hook.id}`);
    t.notOk(page.text.includes(secret!), 'not shown again');
    const sent = await dash.post(`/dashboard/webhooks/${hook.id}/test`, {});
    t.equal(sent.status, 200);
    await receiver.waitFor(1);
    t.match(sent.text, /HTTP 500/);
    const delivery = /deliveries\/([^/"]+)\/retry/.exec(sent.text)?.[1];
    t.ok(delivery, 'a retry button for the failed delivery');
    status = 200;
    const retried = await dash.post(
      `/dashboard/webhooks/${hook.id}/deliveries/${delivery}/retry`,
      {},
    );
    t.equal(retried.status, 200);
    t.match(retried.text, /retried: succeeded/);
    t.equal(receiver.requests.length, 2);
    const ro = await signInDashboard(s, s.keys.read_only);
    const roPage = await ro.get(`/dashboard/webhooks/${hook.id}`);
    t.notMatch(
      roPage.text,
      /Send a test event|Rotate the secret|Retry now/,
      'read_only: no buttons',
    );
  },
);

t.test('integrations: connect forms map onto the API input; secrets never come back', async (t) => {
  const s = await startTestServer(t, { ALLOW_PRIVATE_TARGETS: 'true' });
  const rw = await signInDashboard(s, s.keys.read_write);
  const bad = await rw.post('/dashboard/integrations', {
    platform: 'feed',
    url: 'ftp://nowhere',
    consumer_key: 'ck_should_not_echo',
  });
  t.equal(bad.status, 422);
  t.match(bad.text, /id="feed-url-error"/, "the problem beside the feed form's URL");
  t.notOk(bad.text.includes('ck_should_not_echo'));
  const woo = await rw.post('/dashboard/integrations', {
    platform: 'woocommerce',
    shop_domain: 'HTTPS://LOCALHOST:9/',
    consumer_key: 'ck_secret_value_1',
    consumer_secret: 'cs_secret_value_2',
    access_token: 'shopify-token-not-for-woo',
  });
  t.equal(woo.status, 303);
  const list = (await s.request('GET', '/v1/integrations')).body.integrations;
  t.equal(list.length, 1);
  t.equal(list[0].shop_domain, 'localhost:9', 'the API’s own normalisation');
  t.equal(list[0].credentials_set, true);
  const page = await rw.get(woo.headers.get('location')!);
  t.equal(page.status, 200);
  for (const secret of ['ck_secret_value_1', 'cs_secret_value_2']) {
    t.notOk(page.text.includes(secret), 'credentials never shown');
  }
  t.match(page.text, /set \(never shown\)/);
  // One form per platform, each with its own fields only.
  const forms = [
    ...(await rw.get('/dashboard/integrations')).text.matchAll(
      /<form class="box" method="post" action="\/dashboard\/integrations"[\s\S]*?<\/form>/g,
    ),
  ].map((m) => m[0]);
  const namesIn = (form: string) =>
    [...form.matchAll(/<(?:input|select)[^>]*?name="([^"]+)"/g)]
      .map((m) => m[1])
      .filter((n) => n !== 'csrf' && n !== 'platform');
  t.same(forms.map(namesIn), [
    ['url', 'format', 'max_mb', 'token', 'username', 'password'],
    ['shop_domain', 'access_token', 'client_id', 'client_secret'],
    ['shop_domain', 'consumer_key', 'consumer_secret'],
  ]);
  // A new Shopify app: a client id and secret, no access token.
  const shopify = await rw.post('/dashboard/integrations', {
    platform: 'shopify',
    shop_domain: 'example.myshopify.com',
    client_id: 'client-id-1',
    client_secret: 'shpss_client_secret_1',
  });
  t.equal(shopify.status, 303, shopify.text);
  const feed = await rw.post('/dashboard/integrations', {
    platform: 'feed',
    url: 'https://x.example/f.csv',
    format: 'csv',
    max_mb: '2',
  });
  t.equal(feed.status, 303, feed.text);
  const byPlatform = new Map<string, any>(
    (await s.request('GET', '/v1/integrations')).body.integrations.map((i: any) => [i.platform, i]),
  );
  t.equal(byPlatform.get('shopify').credentials_set, true);
  t.same(byPlatform.get('feed').settings, {
    url: 'https://x.example/f.csv',
    format: 'csv',
    max_bytes: 2 * 1024 * 1024,
  });
  const tooBig = await rw.post('/dashboard/integrations', {
    platform: 'feed',
    url: 'https://x.example/f.csv',
    max_mb: '99999999',
  });
  t.equal(tooBig.status, 422);
  t.match(tooBig.text, /id="feed-max_mb-error"/, 'the size problem beside its field');
  t.match(tooBig.text, /value="https:\/\/x\.example\/f\.csv"/, 'what was typed is kept');

  const ro = await signInDashboard(s, s.keys.read_only);
  const roPage = await ro.get(woo.headers.get('location')!);
  t.notMatch(roPage.text, /Sync now|Test the connection|Connect a store/);
  t.equal(
    (await ro.post('/dashboard/integrations', { platform: 'feed', url: 'https://x.example/f.csv' }))
      .status,
    403,
  );
});

t.test('a form over 256 KB is refused with 413 and changes nothing', async (t) => {
  const s = await startTestServer(t);
  const dash = await signInDashboard(s, s.keys.read_write);
  const res = await dash.post('/dashboard/products', { name: 'x'.repeat(300_000), price: '1' });
  t.equal(res.status, 413);
  t.match(res.text, /too large/);
  t.equal(res.headers.get('cache-control'), 'no-store');
  t.equal((await s.request('GET', '/v1/products')).body.pagination.total, 0);
});
