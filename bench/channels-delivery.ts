/**
 * Channels (issue 22), the push deliveries, over the catalogue bench/channels.ts seeded:
 *
 * - SFTP: the openai jsonl.gz file sent by `agentshelf feeds deliver ID --force` (our ssh2
 *   transport, src/platforms/sftp.ts; timed by the delivery record's started_at to
 *   finished_at: connect, authenticate, upload, rename, stat) beside OpenSSH's own `sftp -b`
 *   putting the same file to the same sshd (timed from its start to its exit, connection
 *   included), in turns: ours, sftp, ours, sftp.
 * - ACP: the acp jsonl file pushed by `feeds deliver ID --force` (src/platforms/acp-feed-api.ts,
 *   timed by the record) beside a bare loop sending the same batches (bench/acp-push-floor.ts),
 *   both to one bare receiver (bench/servers/acp-receiver.ts), in turns.
 * - No change: `build` again with nothing changed, then `feeds deliver ID` (no --force): the
 *   records must be `skipped`, sshd must see no login and the remote file no change, and the
 *   receiver no request.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { Config } from '../src/config.js';
import { openStore } from '../src/db/store.js';
import { createFeed, feedOptionsOf } from '../src/domain/feeds/feeds.js';
import type { FeedCreateInput } from '../src/domain/feeds/schemas.js';
import { launchSshd, type SshdProcess } from '../test/support/sshd.js';
import { startChild } from './support.js';

const run = promisify(execFile);
const HERE = path.dirname(fileURLToPath(import.meta.url)); // build/bench
const CLI = path.join(HERE, '../src/main.js');
const PUSH_FLOOR = path.join(HERE, 'acp-push-floor.js');
const RECEIVER = path.join(HERE, 'servers/acp-receiver.js');
const MB = 1024 * 1024;
const ROUNDS = 2;
const TOKEN = 'bench-token';
const REMOTE_FEED = 'feed_bench';

export interface DeliveryFigures {
  sftp: {
    bytes: number;
    ours: number[];
    openssh: number[];
    /** OpenSSH's sftp with nothing to put (its start, connection and exit), seconds. */
    opensshAlone: number;
  };
  acp: {
    /** ACP Products sent (a line of the file each: a product with its variants). */
    products: number;
    /** The catalogue's products they hold (the delivery record's count). */
    catalogue: number;
    ours: number[];
    bare: number[];
    /** PATCH requests and body bytes the receiver got from each sender (per run, the last). */
    received: { ours: Stats; bare: Stats };
  };
  unchanged: {
    statuses: string[];
    logins: number;
    remoteChanged: boolean;
    patches: number;
  };
  /** Peak RSS of the builds of the two push feeds, MB. */
  rssMb: number;
  /** Wall time of all of the above, seconds (for sizing a run). */
  seconds: number;
}

interface Stats {
  requests: number;
  bytes: number;
}

interface DeliveryRecord {
  status: string;
  products: number;
  bytes: number;
  started_at: string | null;
  finished_at: string | null;
  error: string | null;
  remote: { products?: number; batches?: number } | null;
}

async function node(args: string[], env: Record<string, string>): Promise<string> {
  const { stdout } = await run(process.execPath, args, {
    env: { PATH: process.env.PATH ?? '', ...env },
    maxBuffer: 64 * MB,
  });
  return stdout;
}

/** `feeds deliver ID [--force] --json`: the record it made (exit 0: delivered or skipped). */
async function deliver(id: string, env: Record<string, string>, force: boolean) {
  const args = [CLI, 'feeds', 'deliver', id, '--json', ...(force ? ['--force'] : [])];
  return JSON.parse(await node(args, env)) as DeliveryRecord;
}

/** The send's seconds, by the record (started_at to finished_at, millisecond stamps). */
function sendSeconds(record: DeliveryRecord): number {
  if (record.status !== 'delivered' || !record.started_at || !record.finished_at) {
    throw new Error(`delivery ${record.status}: ${record.error ?? ''}`);
  }
  return (Date.parse(record.finished_at) - Date.parse(record.started_at)) / 1000;
}

/** OpenSSH's sftp running `command`, key and host key pinned as ours are; seconds. */
async function openSshSftp(sshd: SshdProcess, dir: string, command: string) {
  const batch = path.join(dir, 'sftp-batch');
  fs.writeFileSync(batch, `${command}\n`);
  const started = performance.now();
  await run('sftp', [
    '-q',
    '-b',
    batch,
    '-i',
    sshd.privateKeyFile,
    '-P',
    String(sshd.port),
    '-o',
    `UserKnownHostsFile=${sshd.knownHostsFile}`,
    '-o',
    'StrictHostKeyChecking=yes',
    '-o',
    'BatchMode=yes',
    `${sshd.username}@${sshd.host}`,
  ]);
  return (performance.now() - started) / 1000;
}

async function receiverStats(url: string): Promise<Stats> {
  return (await (await fetch(`${url}/stats`)).json()) as Stats;
}

const logins = (sshd: SshdProcess) => sshd.log().split('Accepted publickey').length - 1;

function remoteState(file: string): string {
  const s = fs.statSync(file);
  return `${s.ino}/${s.size}/${s.mtimeMs}`;
}

/** Why OpenSSH's sshd or sftp cannot run here, or undefined when both can. */
export function deliveryToolsMissing(): string | undefined {
  if (!fs.existsSync(process.env.SSHD_BIN ?? '/usr/sbin/sshd')) {
    return 'sshd is missing (apt-get install openssh-server)';
  }
  const found = process.env.PATH?.split(':').some((d) => fs.existsSync(path.join(d, 'sftp')));
  return found ? undefined : 'sftp is missing (apt-get install openssh-client)';
}

/**
 * The push deliveries over the seeded store in `dir` (env: its DATA_DIR and PUBLIC_DIR; the
 * config loaded from it with ALLOW_PRIVATE_TARGETS=true, loopback targets being private).
 */
export async function measureDeliveries(
  dir: string,
  env: Record<string, string>,
  config: Config,
): Promise<DeliveryFigures> {
  const started = performance.now();
  const sshd = await launchSshd();
  let receiver: Awaited<ReturnType<typeof startChild>> | undefined;
  try {
    receiver = await startChild(process.execPath, [RECEIVER], {
      ready: /listening on (http:\/\/\S+)/,
    });
    const url = receiver.match[1]!;
    const remote = path.join(sshd.root, 'products.jsonl.gz');
    const feeds: FeedCreateInput[] = [
      {
        name: 'sftp bench',
        profile: 'openai',
        format: 'jsonl',
        compression: 'gzip',
        delivery: {
          type: 'sftp',
          host: sshd.host,
          port: sshd.port,
          username: sshd.username,
          path: remote,
          host_key_sha256: sshd.hostKeySha256,
          max_drop: 0.2,
        },
        credentials: { private_key: sshd.privateKey },
      },
      {
        name: 'acp bench',
        profile: 'acp',
        format: 'jsonl',
        delivery: { type: 'acp_feed_api', url, feed_id: REMOTE_FEED, max_drop: 0.2 },
        credentials: { token: TOKEN },
      },
    ];
    const store = openStore(config);
    const options = { ...feedOptionsOf(config), startDelayMs: 0 };
    const sftpFeed = await createFeed(store.db, feeds[0]!, options);
    const acpFeed = await createFeed(store.db, feeds[1]!, options);
    await store.close();
    let rssMb = 0;
    const build = async () => {
      const out = JSON.parse(await node([CLI, 'build', '--json'], env)) as {
        peak_rss_bytes: number;
        stages: { outputs?: { ok: boolean; error?: string }[] }[];
      };
      const failed = out.stages.flatMap((s) => s.outputs ?? []).find((o) => !o.ok);
      if (failed) throw new Error(`build failed: ${failed.error}`);
      rssMb = Math.max(rssMb, out.peak_rss_bytes / MB);
    };
    await build();
    const sftpFile = path.join(config.DATA_DIR, 'feeds', `${sftpFeed.id}.jsonl.gz`);
    const acpFile = path.join(config.DATA_DIR, 'feeds', `${acpFeed.id}.jsonl`);
    const bytes = fs.statSync(sftpFile).size;

    // SFTP, in turns; each side's copy checked for size.
    const openSshRemote = path.join(sshd.root, 'openssh.jsonl.gz');
    const sftp: DeliveryFigures['sftp'] = {
      bytes,
      ours: [],
      openssh: [],
      opensshAlone: await openSshSftp(sshd, dir, 'pwd'),
    };
    for (let i = 0; i < ROUNDS; i++) {
      sftp.ours.push(bytes / MB / sendSeconds(await deliver(sftpFeed.id, env, true)));
      if (fs.statSync(remote).size !== bytes) throw new Error('our upload arrived short');
      const put = await openSshSftp(sshd, dir, `put ${sftpFile} ${openSshRemote}`);
      sftp.openssh.push(bytes / MB / put);
      if (fs.statSync(openSshRemote).size !== bytes) throw new Error("sftp's upload arrived short");
    }
    fs.rmSync(openSshRemote);

    // ACP, in turns, to the same receiver.
    const acp: DeliveryFigures['acp'] = {
      products: 0,
      catalogue: 0,
      ours: [],
      bare: [],
      received: { ours: { requests: 0, bytes: 0 }, bare: { requests: 0, bytes: 0 } },
    };
    const received = async (send: () => Promise<unknown>) => {
      const before = await receiverStats(url);
      await send();
      const after = await receiverStats(url);
      return { requests: after.requests - before.requests, bytes: after.bytes - before.bytes };
    };
    for (let i = 0; i < ROUNDS; i++) {
      let record: DeliveryRecord | undefined;
      acp.received.ours = await received(async () => {
        record = await deliver(acpFeed.id, env, true);
      });
      // Ours and the loop counted alike: the file's lines (ACP Products) sent.
      acp.products = record!.remote?.products ?? 0;
      acp.catalogue = record!.products;
      acp.ours.push(acp.products / sendSeconds(record!));
      let floor: { products: number; ms: number } | undefined;
      acp.received.bare = await received(async () => {
        floor = JSON.parse(await node([PUSH_FLOOR, acpFile, url, REMOTE_FEED, TOKEN], env)) as {
          products: number;
          ms: number;
        };
      });
      if (floor!.products !== acp.products) throw new Error('the bare loop sent another count');
      acp.bare.push((floor!.products / floor!.ms) * 1000);
    }

    // Nothing changed: build again, then deliver without --force.
    const loginsBefore = logins(sshd);
    const remoteBefore = remoteState(remote);
    const patchesBefore = (await receiverStats(url)).requests;
    const rebuilt = new Date().toISOString();
    await build();
    const store2 = openStore(config);
    const planned = await store2.db
      .selectFrom('feed_deliveries')
      .select(['feed_id', 'status'])
      .where('feed_id', 'in', [sftpFeed.id, acpFeed.id])
      .where('created_at', '>=', rebuilt)
      .orderBy('id')
      .execute();
    await store2.close();
    // One record per feed and generation: none would mean no generation, not a skip.
    const statuses = [sftpFeed, acpFeed].map(
      (f) => `build: ${planned.find((r) => r.feed_id === f.id)?.status ?? 'no record'}`,
    );
    for (const feed of [sftpFeed, acpFeed]) {
      statuses.push(`deliver: ${(await deliver(feed.id, env, false)).status}`);
    }
    const unchanged: DeliveryFigures['unchanged'] = {
      statuses,
      logins: logins(sshd) - loginsBefore,
      remoteChanged: remoteState(remote) !== remoteBefore,
      patches: (await receiverStats(url)).requests - patchesBefore,
    };
    return { sftp, acp, unchanged, rssMb, seconds: (performance.now() - started) / 1000 };
  } finally {
    await receiver?.stop();
    await sshd.stop();
  }
}

const n = (v: number) => Math.round(v).toLocaleString('en');
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
const mean = (xs: number[]) => sum(xs) / xs.length;
const met = (ok: boolean) => (ok ? 'met' : 'MISSED');

export function reportDeliveries(f: DeliveryFigures): void {
  const sftpRatio = mean(f.sftp.ours) / mean(f.sftp.openssh);
  const mbs = (xs: number[]) => xs.map((x) => x.toFixed(1)).join(', ');
  console.log(
    `  sftp delivery of the openai jsonl.gz (${(f.sftp.bytes / MB).toFixed(1)} MB), in turns: ours ${mbs(f.sftp.ours)} MB/s; OpenSSH sftp put ${mbs(f.sftp.openssh)} MB/s (sftp with nothing to put: ${f.sftp.opensshAlone.toFixed(2)} s, connection included in both)`,
  );
  console.log(
    `  sftp delivery    ${mean(f.sftp.ours).toFixed(1).padStart(7)} MB/s  ${sftpRatio.toFixed(2)}x OpenSSH's sftp  (target >= 0.70: ${met(sftpRatio >= 0.7)})`,
  );
  const acpRatio = mean(f.acp.ours) / mean(f.acp.bare);
  const { ours, bare } = f.acp.received;
  console.log(
    `  acp push of ${n(f.acp.products)} ACP Products (lines; ${n(f.acp.catalogue)} catalogue products with their variants), in turns: ours ${f.acp.ours.map(n).join(', ')}/s; bare PATCH loop ${f.acp.bare.map(n).join(', ')}/s (received per run: ours ${n(ours.requests)} PATCHes ${n(ours.bytes)} bytes, bare ${n(bare.requests)} PATCHes ${n(bare.bytes)} bytes)`,
  );
  console.log(
    `  acp push         ${n(mean(f.acp.ours)).padStart(9)} Products/s  ${acpRatio.toFixed(2)}x the bare loop  (target >= 0.50: ${met(acpRatio >= 0.5)})`,
  );
  const u = f.unchanged;
  const zero =
    u.statuses.every((s) => s.endsWith('skipped')) &&
    u.logins === 0 &&
    !u.remoteChanged &&
    u.patches === 0;
  console.log(
    `  no change, build and deliver again: ${u.statuses.join(', ')}; sshd logins ${u.logins}, remote file ${u.remoteChanged ? 'changed' : 'untouched'}, ACP PATCHes ${u.patches}; sends 0 bytes: ${met(zero)}`,
  );
  console.log(
    `  (the push deliveries took ${f.seconds.toFixed(0)} s in all, their two builds included)`,
  );
}
