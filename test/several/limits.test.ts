import t, { type Test } from 'tap';
import { runCliAsync } from '../support/cli.js';
import { openShared, serveShared, sharedStore, type SharedStore } from '../support/several.js';

// The limits live in the store both processes share (the PostgreSQL default; on SQLite it
// is chosen here, as a deployment of several processes on one file would).
const SERVE_ENV = { RATE_LIMIT_STORE: 'database', AUDIT_LOG: 'off', FEEDS_CRON: '0 0 1 1 *' };

/**
 * Made by the CLI without blocking the event loop (runCliAsync): a blocked loop keeps the
 * fetch pool's idle sockets past the servers' keep-alive timeout on a busy machine, and the
 * next request is written on one the server has just closed.
 */
async function makeKey(shared: SharedStore, flags: string[]): Promise<string> {
  const made = await runCliAsync(['keys', 'create', '--level', 'read_only', ...flags], shared.env);
  if (made.status !== 0) throw new Error(made.stderr);
  return made.stdout.trim();
}

/** Sends `n` requests at once, alternating between the servers; the statuses by server. */
async function burst(t: Test, urls: string[], key: string, n: number) {
  const statuses = await Promise.all(
    Array.from({ length: n }, async (_, i) => {
      const res = await fetch(`${urls[i % urls.length]}/v1/products?limit=1`, {
        headers: { authorization: `Bearer ${key}` },
      });
      await res.arrayBuffer();
      return { server: i % urls.length, status: res.status };
    }),
  );
  t.same(
    [...new Set(statuses.map((s) => s.status))].filter((s) => s !== 200 && s !== 429),
    [],
    'every answer is 200 or 429',
  );
  return statuses;
}

t.test('two serve processes hold a key to one minute, one burst and one month', async (t) => {
  const shared = await sharedStore(t);
  const a = await serveShared(t, shared, SERVE_ENV);
  const b = await serveShared(t, shared, SERVE_ENV);
  const urls = [a.url, b.url];

  const perMinute = await makeKey(shared, [
    '--rpm',
    '20',
    '--burst',
    '6000',
    '--monthly',
    '100000',
  ]);
  // Ten first, which both let through: a process decides the requests that arrive together
  // in one statement, so 40 at once could all be decided by one of them (still 20 in all).
  const first = await burst(t, urls, perMinute, 10);
  t.same(
    first.map((s) => s.status),
    Array(10).fill(200),
    'the first 10 go through',
  );
  t.ok(
    urls.every((_, i) => first.some((s) => s.server === i)),
    'both processes let some through',
  );
  const minute = await burst(t, urls, perMinute, 30);
  t.equal(minute.filter((s) => s.status === 200).length, 10, '20 a minute between both');

  // --burst 60 a minute: floor(60 / 6) = 10 in a 10-second window.
  const perBurst = await makeKey(shared, ['--rpm', '1000', '--burst', '60', '--monthly', '100000']);
  const burstOk = (await burst(t, urls, perBurst, 30)).filter((s) => s.status === 200);
  t.equal(burstOk.length, 10, '10 in a burst window between both');

  const perMonth = await makeKey(shared, ['--rpm', '1000', '--burst', '6000', '--monthly', '15']);
  const month = await burst(t, urls, perMonth, 30);
  t.equal(month.filter((s) => s.status === 200).length, 15, '15 a month between both');
  const refused = await fetch(`${b.url}/v1/products?limit=1`, {
    headers: { authorization: `Bearer ${perMonth}` },
  });
  t.equal(refused.status, 429);
  t.equal(((await refused.json()) as any).error.code, 'rate_limit_exceeded');

  // Both servers stop cleanly, writing their monthly counts: 15 between them.
  a.child.kill('SIGTERM');
  b.child.kill('SIGTERM');
  t.same([await a.exited, await b.exited], [0, 0]);
  const store = openShared(t, shared);
  const usage = await store.db
    .selectFrom('api_key_usage as u')
    .innerJoin('api_keys as k', 'k.id', 'u.api_key_id')
    .select(['u.requests'])
    .where('k.monthly', '=', 15)
    .execute();
  t.same(
    usage.map((u) => Number(u.requests)),
    [15],
    'the usage figures count what both let through',
  );
});
