import t from 'tap';
import { startFeedServer } from '../support/feed-server.js';
import { feedProduct, jsonl } from '../support/integrations.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * Issue 20: API reads never wait behind a sync's final apply. A sync's apply is held open
 * (inside its transaction, after its first page is written) until an API read has been
 * answered: the read sees the catalogue as it was before the sync, never half of it; once
 * released, the run applies all of it.
 */

const PRIVATE = { ALLOW_PRIVATE_TARGETS: 'true' };

function signal(): { promise: Promise<void>; fire: () => void } {
  let fire!: () => void;
  const promise = new Promise<void>((resolve) => (fire = resolve));
  return { promise, fire };
}

async function prices(s: TestServer): Promise<Record<string, number>> {
  const products = (await s.request('GET', '/v1/products?limit=250')).body.products as any[];
  return Object.fromEntries(products.map((p) => [p.name as string, p.price as number]));
}

t.test(
  'an API read is answered while a sync holds its apply open, and sees none of it',
  async (t) => {
    const feeds = await startFeedServer(t);
    let hold = false;
    const applying = signal();
    const release = signal();
    const server = await startTestServer(t, PRIVATE, {
      integrations: {
        // Two items a page: the apply writes page 0, then waits here before page 1.
        batchSize: 2,
        inApply: async (page) => {
          if (!hold || page !== 1) return;
          applying.fire();
          await release.promise;
        },
      },
    });
    const ids = ['R1', 'R2', 'R3', 'R4'];
    feeds.set('/p.jsonl', jsonl(ids.map((id) => feedProduct(id, { price: '10.00 USD' }))));
    const created = await server.request('POST', '/v1/integrations', {
      body: { platform: 'feed', settings: { url: feeds.url('/p.jsonl') } },
    });
    t.equal(created.status, 201, created.text);
    const id = created.body.id as string;
    const first = await server.request('POST', `/v1/integrations/${id}/sync`);
    t.match(await server.server.deps.integrations!.settled(first.body.id), { created: 4 });
    const before = await prices(server);
    t.same(Object.values(before), [10, 10, 10, 10]);
    const productId = (await server.request('GET', '/v1/products?limit=1')).body.products[0].id;

    // Every price changes and a fifth product comes: the apply writes two, then is held.
    feeds.set(
      '/p.jsonl',
      jsonl([...ids, 'R5'].map((id) => feedProduct(id, { price: '12.50 USD' }))),
    );
    hold = true;
    const started = await server.request('POST', `/v1/integrations/${id}/sync`);
    t.equal(started.status, 202, started.text);
    await applying.promise;

    // Should the read wait for the apply, the apply is let go after 10 s and the test fails.
    let releasedByGuard = false;
    const guard = setTimeout(() => {
      releasedByGuard = true;
      release.fire();
    }, 10_000);
    const during = await prices(server);
    const status = await server.request('GET', `/v1/integrations/${id}/sync/status`);
    const one = await server.request('GET', `/v1/products/${productId}`);
    clearTimeout(guard);
    t.notOk(releasedByGuard, 'the reads were answered while the apply was held open');
    t.same(during, before, 'the catalogue as it was: no half-applied page');
    t.equal(status.body.status, 'running', 'the sync is still applying');
    t.equal(one.status, 200);
    t.equal(one.body.price, 10);

    release.fire();
    const run = await server.server.deps.integrations!.settled(started.body.id);
    t.match(run, { status: 'succeeded', updated: 4, created: 1 }, JSON.stringify(run));
    t.same(Object.values(await prices(server)), [12.5, 12.5, 12.5, 12.5, 12.5]);
  },
);
