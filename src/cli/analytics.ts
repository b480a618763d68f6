import { loadConfig } from '../config.js';
import { migrateToLatest } from '../db/migrate.js';
import { openStore } from '../db/store.js';
import { AI_AGENTS, AI_AGENTS_SOURCE } from '../domain/analytics/agents.js';
import { recordAccess } from '../domain/analytics/interactions.js';
import { importLogs, StoreError, type ImportSummary } from '../domain/analytics/log-import.js';
import { resolvePublicPath } from '../domain/discovery/policy.js';
import { intFlag, parseVerbArgs, UsageError } from './args.js';
import { createProgress } from './progress.js';

/**
 * `agentshelf analytics <command>`. Each command is one entry of ANALYTICS_COMMANDS: add one
 * there (its usage lines go into the verb's help).
 */
interface AnalyticsCommand {
  /** Its lines in `agentshelf analytics --help`. */
  usage: string;
  run(argv: string[]): Promise<number>;
}

const importUsage = `  analytics import FILE... [--host HOST] [--prefix PATH] [--batch N] [--dry-run] [--json]
      Reads CDN access logs into the analytics store: nginx combined (what the generated
      nginx config writes), Cloudflare Logpush http_requests NDJSON and CloudFront standard
      logs (W3C), each recognised from its content, gzipped or not; FILE - reads standard
      input (zcat, aws s3 cp s3://bucket/key -). Only requests for the
      discovery tree count (the others are counted as skipped). Importing a file again adds
      nothing (the CDN's request id, or a hash of the line, is kept). Lines that cannot be read
      are counted and listed with their line numbers (the first 20); they never stop the run.
      --host HOST    Only requests for this host count (Cloudflare and CloudFront logs name
                     it; nginx's do not).
      --prefix PATH  The tree is served under PATH on the CDN (/agentshelf): it is stripped
                     before a path is matched.
      --batch N      Records written per transaction (default 5000).
      --dry-run      Reads and checks the files, stores nothing (imported: what would be
                     offered to the store; duplicates are not looked up).
      --json         One JSON object: files, lines, imported, duplicates, skipped, bad (with
                     the first bad lines), by format, duration.
      Exit status 0 when every file was read (bad lines included), 1 when a file could not
      be read or is not a log format agentshelf reads.`;

const agentsUsage = `  analytics agents [--json]
      Prints who counts as an AI agent: name, operator, kind (assistant, search, training,
      agent). The table is src/domain/analytics/ai-agents.json (source and licence beside it).`;

const ANALYTICS_COMMANDS: Record<string, AnalyticsCommand> = {
  import: { usage: importUsage, run: runImport },
  agents: { usage: agentsUsage, run: runAgents },
};

export const analyticsHelp = `Usage: agentshelf analytics <command> [options]

What AI agents do with the catalogue (CONTRACT part 9).

${Object.values(ANALYTICS_COMMANDS)
  .map((c) => c.usage)
  .join('\n')}`;

export async function runAnalytics(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (!sub || sub === '--help' || sub === '-h' || sub === 'help') {
    console.log(analyticsHelp);
    return sub ? 0 : 2;
  }
  const command = ANALYTICS_COMMANDS[sub];
  if (!command)
    throw new UsageError(
      `unknown command '${sub}': use ${Object.keys(ANALYTICS_COMMANDS).join(', ')}`,
    );
  return command.run(rest);
}

async function runAgents(argv: string[]): Promise<number> {
  const { values, positionals } = parseVerbArgs(argv, {});
  if (values.help) {
    console.log(agentsUsage);
    return 0;
  }
  if (positionals.length > 0) throw new UsageError('analytics agents takes no arguments');
  const rows = AI_AGENTS.filter((a) => !a.robotsTxtOnly);
  if (values.json) {
    console.log(
      JSON.stringify({
        source: AI_AGENTS_SOURCE,
        agents: AI_AGENTS.map((a) => ({
          name: a.name,
          operator: a.operator,
          kind: a.kind,
          robots_txt_only: a.robotsTxtOnly,
        })),
      }),
    );
    return 0;
  }
  const width = (f: (a: (typeof rows)[number]) => string, title: string) =>
    Math.max(title.length, ...rows.map((a) => f(a).length));
  const wName = width((a) => a.name, 'NAME');
  const wOp = width((a) => a.operator ?? '-', 'OPERATOR');
  const line = (n: string, o: string, k: string) => `${n.padEnd(wName)}  ${o.padEnd(wOp)}  ${k}`;
  const out = [line('NAME', 'OPERATOR', 'KIND')];
  const order = ['assistant', 'search', 'agent', 'training'];
  const sorted = [...rows].sort(
    (a, b) =>
      order.indexOf(a.kind) - order.indexOf(b.kind) ||
      (a.operator ?? '~').localeCompare(b.operator ?? '~') ||
      a.name.localeCompare(b.name),
  );
  for (const a of sorted) out.push(line(a.name, a.operator ?? '-', a.kind));
  const robots = AI_AGENTS.filter((a) => a.robotsTxtOnly).map((a) => a.name);
  out.push(
    '',
    `${rows.length} agents. robots.txt tokens only, never in a request: ${robots.join(', ')}.`,
    `Other bots (isbot) and people are counted apart. Source: ${AI_AGENTS_SOURCE} (MIT).`,
  );
  console.log(out.join('\n'));
  return 0;
}

/** The discovery tree's paths: what the discovery server answers from the published files. */
export function discoveryPathMatcher(prefix: string): (path: string) => boolean {
  const base = prefix.replace(/\/+$/, '');
  // Logs ask for the same few thousand paths over and over: remember the answers.
  const memo = new Map<string, boolean>();
  return (path) => {
    const known = memo.get(path);
    if (known !== undefined) return known;
    let p = path;
    let answer: boolean;
    if (base && !p.startsWith(`${base}/`)) answer = false;
    else {
      if (base) p = p.slice(base.length);
      answer = p.startsWith('/') && !('error' in resolvePublicPath(p));
    }
    if (memo.size >= 50_000) memo.clear();
    memo.set(path, answer);
    return answer;
  };
}

async function runImport(argv: string[]): Promise<number> {
  const { values, positionals } = parseVerbArgs(argv, {
    host: { type: 'string' },
    prefix: { type: 'string' },
    batch: { type: 'string' },
    'dry-run': { type: 'boolean' },
  });
  if (values.help) {
    console.log(importUsage);
    return 0;
  }
  if (positionals.length === 0) throw new UsageError('analytics import needs at least one FILE');
  const batchSize = intFlag(values.batch, 'batch', 1) ?? 5000;
  const prefix = values.prefix ?? '';
  if (prefix && !prefix.startsWith('/'))
    throw new UsageError(`--prefix must start with '/', got '${prefix}'`);
  const config = loadConfig();
  const store = openStore(config);
  const tty = Boolean(process.stderr.isTTY) && !values.json;
  const progress = createProgress(process.stderr, 'lines');
  let summary: ImportSummary;
  try {
    await migrateToLatest(store.db);
    summary = await importLogs(positionals, {
      sink: values['dry-run']
        ? (records) => Promise.resolve({ stored: records.length, duplicates: 0 })
        : (records) => recordAccess(store.db, records, { currency: config.DEFAULT_CURRENCY }),
      isDiscoveryPath: discoveryPathMatcher(prefix),
      stdin: process.stdin,
      batchSize,
      ...(values.host ? { host: values.host } : {}),
      ...(tty
        ? { onProgress: (done: number) => progress.update({ stage: 'import', done, total: 0 }) }
        : {}),
    });
  } catch (err) {
    if (!(err instanceof StoreError)) throw err;
    console.error(`agentshelf analytics import: ${err.message}`);
    return 1;
  } finally {
    if (tty) progress.clear();
    await store.close();
  }
  const failed = summary.files.filter((f) => f.error);
  if (values.json) console.log(JSON.stringify(summary));
  else console.log(describe(summary));
  for (const f of failed) console.error(`agentshelf analytics import: ${f.file}: ${f.error}`);
  return failed.length > 0 ? 1 : 0;
}

function describe(s: ImportSummary): string {
  const n = (v: number) => v.toLocaleString('en');
  const out = s.files.map(
    (f) =>
      `${f.file}: ${f.format ?? 'unknown format'}${f.gzip ? ' (gzip)' : ''}, ${n(f.lines)} lines, ` +
      `${n(f.imported)} imported, ${n(f.duplicates)} duplicates, ${n(f.skipped)} skipped, ${n(f.bad)} bad`,
  );
  out.push(
    `${s.files.length} file(s), ${n(s.lines)} lines: ${n(s.imported)} imported, ${n(s.duplicates)} already stored, ` +
      `${n(s.skipped)} not for the discovery tree, ${n(s.bad)} bad, in ${(s.duration_ms / 1000).toFixed(1)} s`,
  );
  for (const b of s.bad_lines) out.push(`  bad: ${b.file}:${b.line}: ${b.reason}`);
  if (s.bad > s.bad_lines.length) out.push(`  (${n(s.bad - s.bad_lines.length)} more bad lines)`);
  return out.join('\n');
}
