import t from 'tap';
import { startTestServer } from '../support/server.js';
import { signInDashboard } from '../support/dashboard.js';

t.test('/favicon.ico: an ICO, cached a day; every page links it', async (t) => {
  const s = await startTestServer(t);
  const res = await fetch(`${s.url}/favicon.ico`);
  t.equal(res.status, 200);
  t.equal(res.headers.get('content-type'), 'image/x-icon');
  t.equal(res.headers.get('cache-control'), 'public, max-age=86400');
  const icon = Buffer.from(await res.arrayBuffer());
  t.same([...icon.subarray(0, 6)], [0, 0, 1, 0, 1, 0], 'ICO header: an icon, one image');
  t.equal(icon.readUInt8(6), 16, '16 px wide');
  t.equal(icon.readUInt32LE(14) + icon.readUInt32LE(18), icon.length, 'the image fills the file');
  t.equal(icon.readUInt32LE(22), 40, 'a BMP header follows');
  const signIn = await (await fetch(`${s.url}/dashboard/sign-in`)).text();
  t.match(signIn, '<link rel="icon" href="/favicon.ico" sizes="16x16" />');
  const admin = await signInDashboard(s, s.keys.read_only);
  const page = await admin.get('/dashboard/products');
  t.match(page.text, '<link rel="icon" href="/favicon.ico"');
  t.equal(page.headers.get('cache-control'), 'no-store', 'pages stay no-store');
  const api = await fetch(`${s.url}/favicon.icox`);
  t.equal(api.status, 404, 'only the exact path');
});
