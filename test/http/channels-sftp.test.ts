/**
 * The sftp delivery against a real OpenSSH server started by the test (test/support/sshd.ts):
 * the file arrives under its name (written to a temporary name, then renamed); a changed
 * price is one new delivery; an unchanged catalogue is `skipped`; a 30% drop is `held` until
 * released; a wrong host key fails before anything is sent; a password login (a throwaway
 * account sshd alone knows) delivers, and a wrong password fails without sending.
 */
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import t from 'tap';
import { runCliAsync } from '../support/cli.js';
import { runFeeds, seedChannelProducts, waitFor } from '../support/feeds.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { passwordSshdMissing, sshdMissing, startSshd, type Sshd } from '../support/sshd.js';

const skip = sshdMissing() ?? false;
const passwordSkip = passwordSshdMissing() ?? false;
const ENV = { ALLOW_PRIVATE_TARGETS: 'true', FEED_DELIVERY_RETRY_SCHEDULE: '0.05,0.05' };

function sftpFeed(sshd: Sshd, file: string, hostKey = sshd.hostKeySha256) {
  return {
    name: 'ChatGPT',
    profile: 'openai',
    format: 'jsonl',
    compression: 'gzip',
    delivery: {
      type: 'sftp',
      host: sshd.host,
      port: sshd.port,
      username: sshd.username,
      path: path.join(sshd.root, file),
      host_key_sha256: hostKey,
    },
    credentials: { private_key: sshd.privateKey },
  };
}

async function deliveries(s: TestServer, feedId: string) {
  const res = await s.request('GET', `/v1/feeds/${feedId}/deliveries`);
  return res.body.deliveries as {
    id: string;
    status: string;
    products: number;
    attempts: number;
    error: string;
  }[];
}

/** Waits until the newest delivery has left pending and delivering. */
async function settled(s: TestServer, feedId: string) {
  return waitFor(async () => {
    const [last] = await deliveries(s, feedId);
    return last && !['pending', 'delivering'].includes(last.status) ? last : undefined;
  });
}

function remoteLines(sshd: Sshd, file: string): string[] {
  const text = zlib.gunzipSync(fs.readFileSync(path.join(sshd.root, file))).toString('utf8');
  return text.trimEnd().split('\n');
}

t.test(
  'an openai feed delivered by sftp: arrive, change, skip, hold, release',
  { skip },
  async (t) => {
    const sshd = await startSshd(t);
    const s = await startTestServer(t, ENV);
    await seedChannelProducts(s, 10);
    const created = await s.request('POST', '/v1/feeds', {
      body: sftpFeed(sshd, 'products.jsonl.gz'),
    });
    t.equal(created.status, 201, created.text);
    t.match(created.body, { delivery: { type: 'sftp', max_drop: 0.2 }, credentials_set: true });
    t.notMatch(created.text, /PRIVATE KEY/, 'the key is never returned');
    const id = created.body.id;

    await runFeeds(s);
    t.match(await settled(s, id), { status: 'delivered', products: 10 });
    t.equal(remoteLines(sshd, 'products.jsonl.gz').length, 10, 'the file arrived');
    t.same(
      fs.readdirSync(sshd.root).filter((n) => n.includes('.tmp-')),
      [],
      'no temporary left',
    );

    await s.request('PUT', '/v1/products/P-03', { body: { price: 5 } });
    await runFeeds(s);
    t.match(await settled(s, id), { status: 'delivered' });
    t.match(remoteLines(sshd, 'products.jsonl.gz')[3], /"price":"5\.00 USD"/);

    await runFeeds(s);
    t.match(await settled(s, id), { status: 'skipped' });

    for (const p of ['P-00', 'P-01', 'P-02']) {
      await s.request('PUT', `/v1/products/${p}`, { body: { status: 'inactive' } });
    }
    await runFeeds(s);
    const held = await settled(s, id);
    t.match(held, { status: 'held', products: 7 });
    t.equal(remoteLines(sshd, 'products.jsonl.gz').length, 10, 'a held delivery sends nothing');
    const events = await s.server.store.db
      .selectFrom('events')
      .select('type')
      .where('type', 'like', 'feed.deliver%')
      .orderBy('seq')
      .execute();
    t.same(
      events.map((e) => e.type),
      ['feed.delivered', 'feed.delivered', 'feed.delivery_held'],
    );

    const released = await s.request('POST', `/v1/feeds/${id}/deliveries/${held.id}/release`);
    t.equal(released.status, 200);
    t.match(await settled(s, id), { status: 'delivered', products: 7 });
    t.equal(remoteLines(sshd, 'products.jsonl.gz').length, 7);
    const again = await s.request('POST', `/v1/feeds/${id}/deliveries/${held.id}/release`);
    t.equal(again.status, 409, 'only a held delivery is released');

    // The CLI: the same content again is skipped; --force sends it anyway.
    const url = s.config.DATABASE_URL;
    const env = { DATA_DIR: s.dir, ...ENV, ...(url ? { DATABASE_URL: url } : {}) };
    const skipped = await runCliAsync(['feeds', 'deliver', id, '--json'], env);
    t.equal(skipped.status, 0, skipped.stderr);
    t.match(JSON.parse(skipped.stdout), { status: 'skipped' });
    const forced = await runCliAsync(['feeds', 'deliver', id, '--force', '--json'], env);
    t.equal(forced.status, 0, forced.stderr);
    t.match(JSON.parse(forced.stdout), { status: 'delivered', attempts: 1, products: 7 });
  },
);

t.test('a wrong host key fails without sending; bad targets are refused', { skip }, async (t) => {
  const sshd = await startSshd(t);
  const s = await startTestServer(t, ENV);
  await seedChannelProducts(s, 2);
  const wrong = 'SHA256:' + 'A'.repeat(43);
  const feed = await s.request('POST', '/v1/feeds', {
    body: sftpFeed(sshd, 'wrong.jsonl.gz', wrong),
  });
  await runFeeds(s);
  const failed = await waitFor(async () => {
    const [last] = await deliveries(s, feed.body.id);
    return last?.status === 'failed' && last.attempts === 3 ? last : undefined;
  });
  t.match(failed.error, /host key/);
  t.equal(fs.existsSync(path.join(sshd.root, 'wrong.jsonl.gz')), false, 'nothing was sent');

  const noCredentials = await s.request('POST', '/v1/feeds', {
    body: { ...sftpFeed(sshd, 'x.jsonl.gz'), credentials: undefined },
  });
  t.equal(noCredentials.status, 422);
  t.match(noCredentials.text, /credentials/);
  const guarded = await startTestServer(t);
  const refused = await guarded.request('POST', '/v1/feeds', { body: sftpFeed(sshd, 'x') });
  t.equal(refused.status, 422);
  t.match(refused.text, /delivery\.host/);
});

t.test(
  'a password login delivers; a wrong password fails without sending',
  { skip: passwordSkip },
  async (t) => {
    const password = 'correct horse battery staple';
    const sshd = await startSshd(t, { password });
    const s = await startTestServer(t, ENV);
    await seedChannelProducts(s, 3);
    const feed = (file: string, secret: string) => ({
      ...sftpFeed(sshd, file),
      delivery: { ...sftpFeed(sshd, file).delivery, username: sshd.passwordUser },
      credentials: { password: secret },
    });
    const good = await s.request('POST', '/v1/feeds', { body: feed('pw.jsonl.gz', password) });
    t.equal(good.status, 201, good.text);
    t.notMatch(good.text, password, 'the password is never returned');
    const bad = await s.request('POST', '/v1/feeds', { body: feed('bad.jsonl.gz', 'wrong') });
    t.equal(bad.status, 201, bad.text);
    await runFeeds(s);
    t.match(await settled(s, good.body.id), { status: 'delivered', products: 3 });
    t.equal(remoteLines(sshd, 'pw.jsonl.gz').length, 3, 'the file arrived');
    t.equal(
      fs.statSync(path.join(sshd.root, 'pw.jsonl.gz')).uid,
      40_123,
      'written by the password account',
    );
    const failed = await waitFor(async () => {
      const [last] = await deliveries(s, bad.body.id);
      return last?.status === 'failed' && last.attempts === 3 ? last : undefined;
    });
    t.match(failed.error, /authentication/i);
    t.equal(fs.existsSync(path.join(sshd.root, 'bad.jsonl.gz')), false, 'nothing was sent');
  },
);
