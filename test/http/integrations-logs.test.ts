import path from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import t from 'tap';
import { loadConfig } from '../../src/config.js';
import { createApiKey } from '../../src/domain/access/api-keys.js';
import { startServer } from '../../src/server.js';
import { startShopifyServer } from '../support/shopify-server.js';
import { platformSignature } from '../support/integrations.js';

t.test(
  'credentials never reach a log line, at trace level, also when the platform fails',
  async (t) => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(chunk.toString('utf8'));
        done();
      },
    });
    const dir = t.testdir({});
    const config = loadConfig({
      DATA_DIR: dir,
      PUBLIC_DIR: path.join(dir, 'public'),
      PORT: '0',
      FEEDS_PORT: '0',
      ALLOW_PRIVATE_TARGETS: 'true',
    });
    const server = await startServer(config, {
    logger: pino({ level: 'trace' }, sink),
    integrations: { sleep: async () => {} },
  });
    t.teardown(() => server.close());
    const shop = await startShopifyServer({ products: 2, accessToken: 'shpat_secret_token_value' });
    t.teardown(() => shop.close());
    const { secret: key } = await createApiKey(
      server.store.db,
      { level: 'admin' },
      { environment: config.ENVIRONMENT, defaultPlan: config.DEFAULT_PLAN },
    );
    const secrets = {
      access_token: 'shpat_secret_token_value',
      webhook_secret: 'webhook-secret-value',
    };
    const call = async (method: string, url: string, body?: unknown) => {
      const res = await fetch(server.url + url, {
        method,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: res.status, body: (await res.json().catch(() => undefined)) as any };
    };
    const created = await call('POST', '/v1/integrations', {
      platform: 'shopify',
      shop_domain: new URL(shop.origin).host,
      credentials: secrets,
    });
    t.equal(created.status, 201);
    const id = created.body.id as string;
    await call('POST', `/v1/integrations/${id}/test`);
    const ok = await call('POST', `/v1/integrations/${id}/sync`);
    await server.deps.integrations!.settled(ok.body.id);
    shop.failNext.push({ status: 500 }, { status: 500 }, { status: 500 }, { status: 500 });
    shop.failNext.push({ status: 401, body: '{"errors":"[API] Invalid API key or access token"}' });
    const failing = await call('POST', `/v1/integrations/${id}/sync`);
    const run = await server.deps.integrations!.settled(failing.body.id);
    t.equal(run?.status, 'failed');
    const raw = '{"id":1}';
    await fetch(`${server.url}/v1/integrations/${id}/webhook`, {
      method: 'POST',
      body: raw,
      headers: {
        'content-type': 'application/json',
        'x-shopify-topic': 'products/delete',
        'x-shopify-hmac-sha256': platformSignature(secrets.webhook_secret, raw),
      },
    });
    await call('PUT', `/v1/integrations/${id}`, {
      credentials: { access_token: 'shpat_other_secret' },
    });
    server.deps.logger.flush();
    t.ok(lines.length > 5, `${lines.length} log lines written`);
    const log = lines.join('');
    for (const value of [...Object.values(secrets), 'shpat_other_secret']) {
      t.notOk(log.includes(value), `no log line holds ${value.slice(0, 6)}...`);
    }
  },
);
