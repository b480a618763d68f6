// stores: sqlite-only — a signal test (a report server SIGKILLed mid-report, 30,000 products
//   seeded); the report row's recovery reads the queries test/reports/api.test.ts runs on both
//   stores
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import { loadConfig } from '../../src/config.js';
import { openStore } from '../../src/db/store.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { createApiKey } from '../../src/domain/access/api-keys.js';
import { seedSynthetic } from '../../src/seed/synthetic.js';
import { temporaryWriter } from '../../src/publish/fs.js';

const SERVER = fileURLToPath(new URL('../support/report-server.js', import.meta.url));
/** Enough products that writing the HTML takes a while after its temporary appears. */
const PRODUCTS = 30_000;

interface Child {
  url: string;
  kill: (signal: NodeJS.Signals) => Promise<void>;
}

async function startChild(t: Test, dir: string): Promise<Child> {
  const child = spawn(process.execPath, [SERVER], {
    env: {
      ...process.env,
      DATA_DIR: dir,
      PUBLIC_DIR: path.join(dir, 'public'),
      LOG_LEVEL: 'silent',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  t.teardown(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      if (out.includes('\n')) resolve(out.trim());
    });
    child.once('exit', (code) => reject(new Error(`report server exited ${code}`)));
  });
  return {
    url,
    kill: async (signal) => {
      child.kill(signal);
      await exited;
    },
  };
}

t.test(
  'a report being generated when the process is SIGKILLed is generated whole after a restart',
  { timeout: 180_000 },
  async (t) => {
    const dir = t.testdir({});
    const config = loadConfig({ DATA_DIR: dir, PUBLIC_DIR: path.join(dir, 'public') });
    const store = openStore(config);
    await migrateToLatest(store.db);
    await seedSynthetic(store.db, { count: PRODUCTS, brands: 50 });
    const { secret } = await createApiKey(
      store.db,
      { level: 'read_write' },
      { environment: config.ENVIRONMENT, defaultPlan: config.DEFAULT_PLAN },
    );
    await store.close();
    const headers = { authorization: `Bearer ${secret}`, 'content-type': 'application/json' };

    const reportsDir = path.join(dir, 'reports');
    fs.mkdirSync(reportsDir);
    const first = await startChild(t, dir);
    // The kill comes as soon as the temporary appears: the report is being written.
    const writing = new Promise<string>((resolve) => {
      const watcher = fs.watch(reportsDir, (_event, name) => {
        if (name && temporaryWriter(name) !== undefined) {
          watcher.close();
          resolve(name);
        }
      });
    });
    const created = await fetch(`${first.url}/v1/reports`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ type: 'products', format: 'html' }),
    });
    t.equal(created.status, 201);
    const { id } = (await created.json()) as { id: string };
    const temporary = await writing;
    await first.kill('SIGKILL');
    t.ok(fs.existsSync(path.join(reportsDir, temporary)), 'the killed process left its temporary');
    t.notOk(fs.existsSync(path.join(reportsDir, `${id}.html`)), 'and no file under the final name');

    const second = await startChild(t, dir);
    let report: any;
    for (;;) {
      const res = await fetch(`${second.url}/v1/reports/${id}`, { headers });
      report = await res.json();
      if (report.status !== 'pending') break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    t.equal(report.status, 'ready');
    t.notOk(fs.existsSync(path.join(reportsDir, temporary)), 'the temporary is gone');
    const download = await fetch(`${second.url}/v1/reports/${id}/download`, { headers });
    const html = await download.text();
    t.equal(Buffer.byteLength(html), report.bytes);
    t.ok(html.endsWith('</html>\n'), 'the file is whole');
    t.equal(html.match(/<tr>/g)?.length, PRODUCTS + 1, 'a row per product');
    t.same(fs.readdirSync(reportsDir), [`${id}.html`]);
    await second.kill('SIGTERM');
  },
);
