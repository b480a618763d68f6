import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import { startReceiver, waitUntil } from '../support/receiver.js';
import { productBody } from '../support/server.js';

const MAIN = fileURLToPath(new URL('../../src/main.js', import.meta.url));

interface Served {
  child: ChildProcess;
  url: string;
  /** The admin key printed on the first start, if this start printed one. */
  firstKey: string | undefined;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts `agentshelf serve` as a child process and reads its address from the banner. */
async function serve(t: Test, dataDir: string): Promise<Served> {
  const child = spawn(process.execPath, [MAIN, 'serve'], {
    env: {
      ...process.env,
      DATA_DIR: dataDir,
      PUBLIC_DIR: `${dataDir}/public`,
      PORT: '0',
      FEEDS_PORT: '0',
      HOST: '127.0.0.1',
      ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_RETRY_SCHEDULE: '0.1',
      LOG_LEVEL: 'silent',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  t.teardown(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  });
  let out = '';
  let err = '';
  child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start: ${out}${err}`)), 15_000);
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /serving the platform API at (http:\/\/\S+)/.exec(out);
      // The first start prints its admin key after the address line; wait for the banner end.
      if (m && /OpenAPI document/.test(out)) {
        clearTimeout(timer);
        setTimeout(() => resolve(m[1]!), 50);
      }
    });
    child.once('exit', () => reject(new Error(`serve exited: ${out}${err}`)));
  });
  return { child, url, firstKey: /(ask_live_[A-Za-z0-9]+)/.exec(out)?.[1], exited };
}

t.test(
  'an event not yet delivered when the server is SIGKILLed is delivered after restart',
  async (t) => {
    const dir = t.testdir({});
    const receiver = await startReceiver(t, () => 'hang');
    const first = await serve(t, dir);
    t.ok(first.firstKey, 'the first start printed an admin key');
    const headers = {
      authorization: `Bearer ${first.firstKey}`,
      'content-type': 'application/json',
    };
    const post = (base: string, path: string, body: unknown) =>
      fetch(base + path, { method: 'POST', headers, body: JSON.stringify(body) }).then(
        async (r) => ({ status: r.status, body: (await r.json()) as any }),
      );

    const hook = await post(first.url, '/v1/webhooks', { url: receiver.url });
    t.equal(hook.status, 201);
    const p1 = await post(first.url, '/v1/products', productBody({ name: 'Before the crash' }));
    t.equal(p1.status, 201);
    // The receiver holds the first attempt open, so it never completes before the kill.
    const [held] = await receiver.waitFor(1);
    const p2 = await post(first.url, '/v1/products', productBody({ name: 'Queued behind it' }));
    t.equal(p2.status, 201);
    first.child.kill('SIGKILL');
    t.same(await first.exited, { code: null, signal: 'SIGKILL' });

    receiver.respond = () => ({ status: 200 });
    const second = await serve(t, dir);
    t.equal(second.firstKey, undefined, 'the key survived: no new admin key');
    const [, again, next] = await receiver.waitFor(3);
    t.equal(again!.headers['x-webhook-id'], held!.headers['x-webhook-id'], 'the same event');
    t.equal(again!.body, held!.body, 'the same body');
    t.same(
      [JSON.parse(again!.body).data.id, JSON.parse(next!.body).data.id],
      [p1.body.id, p2.body.id],
      'delivered in order after the restart',
    );

    const log = await waitUntil('both deliveries to be logged', async () => {
      const res = await fetch(`${second.url}/v1/webhooks/${hook.body.id}/deliveries`, {
        headers,
      });
      const body = (await res.json()) as { deliveries: any[] };
      return body.deliveries.every((d) => d.status === 'succeeded') ? body.deliveries : undefined;
    });
    t.same(
      log.map((d: any) => d.attempts),
      [1, 1],
      'the interrupted attempt left no record: at least once, logged once',
    );

    // A graceful stop ends the worker too, and the process exits cleanly.
    second.child.kill('SIGTERM');
    t.same(await second.exited, { code: 0, signal: null });
    await new Promise((r) => setTimeout(r, 300));
    t.equal(receiver.requests.length, 3, 'nothing was sent twice after success');
  },
);
