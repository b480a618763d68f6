/**
 * `node build/bench/run.js webhooks`: N outbox events to 5 local receivers through a real
 * `agentshelf serve` (so 5N deliveries), against a bare loop POSTing the same bodies with the
 * same concurrency to the same receivers. Run for 10,000 and 50,000 pending events to show
 * that the worker's memory does not grow with the backlog.
 * WEBHOOK_BENCH_EVENTS=10000,50000 (default) picks the sizes.
 *
 * The PostgreSQL column (issue 14; WEBHOOK_BENCH_POSTGRES=0 skips it): the same events on a
 * PostgreSQL store (a cluster of Debian's binaries started for the run, as the tests do),
 * delivered by one `serve` process, then by two on the same database (target: two deliver at
 * least 1.6x what one does, issue 25). WEBHOOK_BENCH_PG_EVENTS (default 10000) picks its size.
 */
import { fork, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../src/config.js';
import { openStore } from '../src/db/store.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { withTransaction } from '../src/db/transaction.js';
import { recordEvent } from '../src/domain/events.js';
import { createWebhook } from '../src/domain/webhooks/webhooks.js';
import { startPgCluster, type PgCluster } from '../test/support/postgres.js';
import type { Benchmark } from './benchmark.js';
import { cpuSecondsOf, pgClusterCpuSeconds } from './support.js';
import { peakRssMb, sampleProduct } from './webhooks-peers.js';

const RECEIVERS = 5;
const PEERS = fileURLToPath(new URL('./webhooks-peers.js', import.meta.url));
const MAIN = fileURLToPath(new URL('../src/main.js', import.meta.url));
const WORK = fileURLToPath(new URL('../../bench/.work', import.meta.url));

interface Stats {
  received: number;
  first: number;
  last: number;
}

function ask<T>(child: ChildProcess, message: unknown): Promise<T> {
  return new Promise((resolve) => {
    child.once('message', (reply) => resolve(reply as T));
    child.send(message as string);
  });
}

async function startReceivers(): Promise<{ child: ChildProcess; ports: number[] }> {
  const child = fork(PEERS, ['receivers', String(RECEIVERS)]);
  const { ports } = await new Promise<{ ports: number[] }>((resolve) =>
    child.once('message', (m) => resolve(m as { ports: number[] })),
  );
  return { child, ports };
}

/** A store with 5 endpoints and `events` product.updated events waiting in the outbox. */
async function prepareStore(
  dir: string,
  ports: number[],
  events: number,
  databaseUrl?: string,
): Promise<void> {
  const store = openStore(
    loadConfig({ DATA_DIR: dir, ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}) }),
  );
  try {
    await migrateToLatest(store.db);
    for (const port of ports) {
      await createWebhook(
        store.db,
        { url: `http://127.0.0.1:${port}/hook` },
        { allowPrivate: true },
      );
    }
    for (let i = 0; i < events; i += 1000) {
      await withTransaction(store.db, async (trx) => {
        for (let j = i; j < Math.min(i + 1000, events); j++) {
          await recordEvent(trx, 'product.updated', sampleProduct(j));
        }
      });
    }
  } finally {
    await store.close();
  }
}

async function countDeliveries(dir: string, databaseUrl?: string): Promise<Record<string, number>> {
  const store = openStore(
    loadConfig({ DATA_DIR: dir, ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}) }),
  );
  try {
    const rows = await store.db
      .selectFrom('webhook_deliveries')
      .select(['status', (eb) => eb.fn.countAll<number>().as('n')])
      .groupBy('status')
      .execute();
    return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
  } finally {
    await store.close();
  }
}

interface WorkerRun {
  deliveries: number;
  seconds: number;
  peakRssMb: number;
  dbMb: number;
  /** The serve processes' CPU (user + system) per delivery, from the first arrival on. */
  cpuUsPerDelivery: number;
  /** The same for the store's server (PostgreSQL's processes); NaN without one. */
  serverCpuUsPerDelivery: number;
}

/**
 * Runs `processes` `agentshelf serve` processes over the prepared store until every delivery
 * has arrived (peak RSS: the largest of them).
 */
async function runServe(
  dir: string,
  receivers: ChildProcess,
  expected: number,
  options: { databaseUrl?: string; processes?: number; serverCpu?: () => number } = {},
): Promise<WorkerRun> {
  await ask(receivers, 'reset');
  const children = Array.from({ length: options.processes ?? 1 }, () =>
    spawn(process.execPath, [MAIN, 'serve'], {
      env: {
        ...process.env,
        DATA_DIR: dir,
        PUBLIC_DIR: path.join(dir, 'public'),
        ...(options.databaseUrl ? { DATABASE_URL: options.databaseUrl } : {}),
        PORT: '0',
        FEEDS_PORT: '0',
        HOST: '127.0.0.1',
        ALLOW_PRIVATE_TARGETS: 'true',
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    }),
  );
  const exits = children.map(
    (child) => new Promise<number | null>((resolve) => child.once('exit', resolve)),
  );
  try {
    let stats: Stats = { received: 0, first: 0, last: 0 };
    const deadline = Date.now() + 15 * 60_000;
    const cpu = () => children.reduce((sum, c) => sum + cpuSecondsOf(c.pid!), 0);
    const serverCpu = options.serverCpu ?? (() => NaN);
    // CPU from the first poll that saw deliveries (start-up left out), with what had arrived.
    let cpuFrom: { seconds: number; server: number; received: number } | undefined;
    while (stats.received < expected) {
      if (children.some((c) => c.exitCode !== null)) {
        throw new Error('agentshelf serve exited during the run');
      }
      if (Date.now() > deadline) throw new Error(`only ${stats.received} of ${expected} arrived`);
      await new Promise((r) => setTimeout(r, 200));
      stats = await ask<Stats>(receivers, 'stats');
      if (!cpuFrom && stats.received > 0 && stats.received < expected) {
        cpuFrom = { seconds: cpu(), server: serverCpu(), received: stats.received };
      }
    }
    const perDelivery = (now: number, from: number | undefined) =>
      cpuFrom && from !== undefined
        ? ((now - from) * 1e6) / (stats.received - cpuFrom.received)
        : NaN;
    const cpuUsPerDelivery = perDelivery(cpu(), cpuFrom?.seconds);
    const serverCpuUsPerDelivery = perDelivery(serverCpu(), cpuFrom?.server);
    const peak = Math.max(...children.map((c) => peakRssMb(c.pid!)));
    for (const child of children) child.kill('SIGTERM');
    await Promise.all(exits);
    const dbMb = options.databaseUrl
      ? 0
      : fs.statSync(path.join(dir, 'agentshelf.sqlite')).size / 1e6;
    return {
      deliveries: stats.received,
      seconds: (stats.last - stats.first) / 1000,
      peakRssMb: peak,
      dbMb,
      cpuUsPerDelivery,
      serverCpuUsPerDelivery,
    };
  } finally {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
    await Promise.all(exits);
  }
}

/** The PostgreSQL column: one serve, then two, on the same events. */
async function runPostgres(
  root: string,
  receivers: { child: ChildProcess; ports: number[] },
): Promise<string[]> {
  const events = Number(process.env.WEBHOOK_BENCH_PG_EVENTS ?? 10_000);
  const expected = events * RECEIVERS;
  let cluster: PgCluster | undefined;
  const rows: string[] = [];
  try {
    cluster = await startPgCluster();
    const rates: number[] = [];
    for (const processes of [1, 2]) {
      const name = `webhooks_${processes}`;
      await cluster.admin(`create database ${name}`);
      const url = cluster.url(name);
      const dir = path.join(root, `pg-${processes}`);
      await prepareStore(dir, receivers.ports, events, url);
      const run = await runServe(dir, receivers.child, expected, {
        databaseUrl: url,
        processes,
        serverCpu: () => pgClusterCpuSeconds(cluster!.dir),
      });
      const counts = await countDeliveries(dir, url);
      if (counts.succeeded !== expected) {
        throw new Error(
          `expected ${expected} succeeded deliveries, found ${JSON.stringify(counts)}`,
        );
      }
      const rate = run.deliveries / run.seconds;
      rates.push(rate);
      rows.push(
        `| PostgreSQL, ${processes} serve process${processes > 1 ? 'es' : ''} | ${fmt(events)} | ${fmt(expected)} | ${fmt(rate)} /s (${fmt(run.seconds, 1)} s) | ${fmt(run.cpuUsPerDelivery)} us + ${fmt(run.serverCpuUsPerDelivery)} us | ${fmt(run.peakRssMb)} MB | ${processes === 1 ? '-' : `${fmt(rate / rates[0]!, 2)}x of one (target >= 1.6x)`} |`,
      );
      console.log(`  PostgreSQL, ${processes} process(es): done`);
    }
  } finally {
    cluster?.destroy();
  }
  return rows;
}

async function runLoop(
  ports: number[],
  perReceiver: number,
): Promise<{ seconds: number; peakRssMb: number; cpuUsPerDelivery: number }> {
  const child = fork(PEERS, ['loop']);
  const reply = await ask<{ ms: number; peakRssMb: number; cpuUs: number }>(child, {
    ports,
    perReceiver,
  });
  return {
    seconds: reply.ms / 1000,
    peakRssMb: reply.peakRssMb,
    cpuUsPerDelivery: reply.cpuUs / (perReceiver * ports.length),
  };
}

const fmt = (n: number, digits = 0) =>
  n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

export const webhooksBenchmark: Benchmark = {
  title: `webhook delivery from the outbox to ${RECEIVERS} local receivers, against a bare POST loop`,
  async run() {
    const sizes = (process.env.WEBHOOK_BENCH_EVENTS ?? '10000,50000')
      .split(',')
      .filter((n) => n !== '' && n !== '0')
      .map(Number);
    const root = path.join(WORK, `webhooks-${process.pid}`);
    fs.mkdirSync(root, { recursive: true });
    const receivers = await startReceivers();
    const rows: string[] = [];
    let pgRows: string[] = [];
    try {
      for (const events of sizes) {
        const dir = path.join(root, String(events));
        await prepareStore(dir, receivers.ports, events);
        const expected = events * RECEIVERS;
        const worker = await runServe(dir, receivers.child, expected);
        const counts = await countDeliveries(dir);
        if (counts.succeeded !== expected) {
          throw new Error(
            `expected ${expected} succeeded deliveries, found ${JSON.stringify(counts)}`,
          );
        }
        await ask(receivers.child, 'reset');
        const loop = await runLoop(receivers.ports, events);
        const workerRate = worker.deliveries / worker.seconds;
        const loopRate = expected / loop.seconds;
        const ratio = workerRate / loopRate;
        rows.push(
          `| ${fmt(events)} | ${fmt(expected)} | ${fmt(workerRate)} /s (${fmt(worker.seconds, 1)} s) | ${fmt(worker.peakRssMb)} MB | ${fmt(worker.dbMb)} MB | ${fmt(loopRate)} /s (${fmt(loop.seconds, 1)} s) | ${fmt(loop.peakRssMb)} MB | ${fmt(ratio, 2)} (target >= 0.50: ${ratio >= 0.5 ? 'met' : 'MISSED'}) | ${fmt(worker.cpuUsPerDelivery)} us vs ${fmt(loop.cpuUsPerDelivery)} us |`,
        );
        console.log(`  ${fmt(events)} events: done`);
      }
      if (process.env.WEBHOOK_BENCH_POSTGRES !== '0') {
        await ask(receivers.child, 'reset');
        pgRows = await runPostgres(root, receivers);
      }
    } finally {
      receivers.child.send('exit');
      fs.rmSync(root, { recursive: true, force: true });
    }
    console.log('');
    console.log(
      '| pending events | deliveries | agentshelf serve | serve peak RSS | store | bare POST loop (baseline) | loop peak RSS | ratio | CPU per delivery, serve vs loop |',
    );
    console.log('|---|---|---|---|---|---|---|---|---|');
    for (const row of rows) console.log(row);
    console.log(
      '\nserve: deliveries/s between the first and the last arrival at the receivers (signing, the outbox, the log);',
    );
    console.log(
      'baseline: the same bodies and concurrency (one request at a time per receiver), no store, no signing.',
    );
    console.log(
      "CPU per delivery: user + system time of serve from the first arrival on (a busy machine's steadier figure), and the loop's.",
    );
    if (pgRows.length > 0) {
      console.log('');
      console.log(
        '| store | pending events | deliveries | serve | CPU per delivery: serve + PostgreSQL | peak RSS (largest process) | two vs one |',
      );
      console.log('|---|---|---|---|---|---|---|');
      for (const row of pgRows) console.log(row);
      console.log(
        "PostgreSQL's CPU: its postmaster and every backend, ended ones included, over the same window as serve's.",
      );
    }
  },
};
