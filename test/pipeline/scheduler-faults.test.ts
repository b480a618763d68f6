import fs from 'node:fs';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import t from 'tap';
import { startPipelineScheduler } from '../../pipeline/scheduler.js';
import { startTestStore } from '../support/pipeline.js';
import { onPostgres } from '../support/store.js';

/** A pino logger whose lines land in `lines`, with a way to wait for one. */
function capturingLogger() {
  const lines: { level: number; msg: string }[] = [];
  const waiters: { match: (msg: string) => boolean; resolve: () => void }[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const text of chunk.toString('utf8').split('\n').filter(Boolean)) {
        const line = JSON.parse(text) as { level: number; msg: string };
        lines.push(line);
        for (const w of waiters.filter((w) => w.match(line.msg))) w.resolve();
      }
      callback();
    },
  });
  const logger = pino({ level: 'debug' }, stream);
  const waitFor = (msg: string) =>
    new Promise<void>((resolve) => {
      if (lines.some((l) => l.msg === msg)) resolve();
      else waiters.push({ match: (m) => m === msg, resolve });
    });
  return { logger, lines, waitFor };
}

t.test(
  'a run that cannot open its reader is logged as crashed; stop still ends cleanly',
  { skip: onPostgres() ? 'SQLite only: the reader fails by the store file moving away' : false },
  async (t) => {
    const { store, config } = await startTestStore(t, {
      FEEDS_CRON: '0 0 1 1 *',
      FEEDS_DEBOUNCE_MS: '0',
    });
    const { logger, lines, waitFor } = capturingLogger();
    // The store's own connection keeps the file open; a new (read-only) connection on the path
    // fails while the file is elsewhere.
    const moved = `${config.DATABASE_FILE}.away`;
    fs.renameSync(config.DATABASE_FILE, moved);
    t.teardown(() => {
      if (fs.existsSync(moved)) fs.renameSync(moved, config.DATABASE_FILE);
    });
    let unhandled: unknown;
    const onUnhandled = (reason: unknown) => (unhandled = reason);
    process.on('unhandledRejection', onUnhandled);
    t.teardown(() => process.off('unhandledRejection', onUnhandled));

    const scheduler = startPipelineScheduler({ store, config, logger });
    const crashed = waitFor('pipeline run crashed');
    scheduler.requestRun('test');
    await crashed;
    await t.resolves(scheduler.stop(), 'stop() resolves after a run that could not start');
    await new Promise((resolve) => setImmediate(resolve));
    t.equal(unhandled, undefined, 'no unhandled rejection');
    const line = lines.find((l) => l.msg === 'pipeline run crashed')!;
    t.equal(line.level, 50, 'logged at error level');
  },
);
