import path from 'node:path';
import t from 'tap';
import { runCli, startServe, type ServeProcess } from '../support/cli.js';
import { productBody } from '../support/server.js';

t.test(
  'a server killed after an idempotent create commits, before it answers: the retry replays it',
  async (t) => {
    const dir = t.testdir({});
    const env = { DATA_DIR: dir, PUBLIC_DIR: path.join(dir, 'public'), HOST: '127.0.0.1' };
    const created = runCli(['keys', 'create', '--level', 'admin'], env);
    t.equal(created.status, 0, created.stderr);
    const secret = created.stdout.trim();
    const serve = async (extra: Record<string, string> = {}): Promise<ServeProcess> => {
      const served = await startServe({ ...env, LOG_LEVEL: 'warn', ...extra });
      t.teardown(async () => {
        if (served.child.exitCode === null && served.child.signalCode === null) {
          served.child.kill('SIGKILL');
        }
        await served.exited;
      });
      return served;
    };
    const post = (url: string) =>
      fetch(`${url}/v1/products`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${secret}`,
          'content-type': 'application/json',
          'idempotency-key': 'order-7',
        },
        // No id: the server generates one, so a second run of the change would be a second product.
        body: JSON.stringify(productBody()),
      });

    // The server kills itself (SIGKILL) once the product and its response have committed.
    const doomed = await serve({ AGENTSHELF_TEST_CRASH: 'after-idempotent-commit' });
    await t.rejects(post(doomed.url), 'the first request gets no answer');
    await doomed.exited;
    t.equal(doomed.child.signalCode, 'SIGKILL', 'the server died by SIGKILL');

    const restarted = await serve();
    const retry = await post(restarted.url);
    t.equal(retry.status, 201, 'the retry gets the original status');
    t.equal(retry.headers.get('idempotent-replayed'), 'true', 'as a replay');
    const replayed = (await retry.json()) as { id: string; name: string };
    const list = await fetch(`${restarted.url}/v1/products`, {
      headers: { authorization: `Bearer ${secret}` },
    });
    const { products, pagination } = (await list.json()) as {
      products: unknown[];
      pagination: { total: number };
    };
    t.equal(pagination.total, 1, 'exactly one product exists');
    t.same(replayed, products[0], 'and the replay is the response made for it');
    t.match(replayed, { id: /^prod_/, name: 'Trail Shoe' });

    // Stop it here: tap removes the test's directory before the teardowns registered after
    // it, and a running server's pipeline would still be publishing into PUBLIC_DIR there.
    restarted.child.kill('SIGTERM');
    await restarted.exited;
  },
);
