import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';

const run = promisify(execFile);
const FS_MODULE = new URL('../../src/publish/fs.js', import.meta.url).href;

/** What a child's writes and commit answered: 'ok' or an error's code. */
interface Outcome {
  write?: string;
  commit: string;
  message?: string;
}

/**
 * A child process whose files may grow to `limitKb` (ulimit -f: a write past it fails with
 * EFBIG, as on a full disk) writes `bytes` through an FsPublisher over a published feed.jsonl
 * (from the main thread, or from the file's own thread as feeds are), and prints what its
 * writes and its commit answered. A child that waits forever is killed.
 */
async function writeUnderLimit(
  root: string,
  limitKb: number,
  bytes: number,
  offThread: boolean,
): Promise<Outcome> {
  const script = `
    import { writeSync } from 'node:fs';
    import { FsPublisher } from ${JSON.stringify(FS_MODULE)};
    const file = new FsPublisher(process.argv[2]).open('feed.jsonl', { offThread: ${offThread} });
    const line = '{"id":"p","title":"${'x'.repeat(80)}"}\\n';
    const out = {};
    try {
      for (let n = 0; n < ${bytes}; n += line.length * 1000) await file.write(line.repeat(1000));
    } catch (err) {
      out.write = err.code;
    }
    try {
      await file.commit();
      out.commit = 'ok';
    } catch (err) {
      out.commit = err.code;
      out.message = err.message;
    }
    writeSync(1, JSON.stringify(out));
  `;
  const file = path.join(path.dirname(root), `${path.basename(root)}-writer.mjs`);
  fs.writeFileSync(file, script);
  // Node ignores SIGXFSZ, so a write past the limit fails with EFBIG. The test runner puts its
  // hooks in every child's NODE_OPTIONS, and they catch the signal and end the child by it:
  // unset, as the child is plain node.
  const { stdout } = await run(
    'sh',
    [
      '-c',
      `unset NODE_OPTIONS && ulimit -f ${limitKb} && exec "$0" "$1" "$2"`,
      process.execPath,
      file,
      root,
    ],
    { timeout: 60_000 },
  );
  return JSON.parse(stdout) as Outcome;
}

for (const offThread of [false, true]) {
  const how = offThread ? 'written by its own thread' : 'written inline';
  t.test(
    `a write the disk refuses (EFBIG) fails the write or the commit with its error, and leaves the published file and no temporary (${how})`,
    async (t) => {
      const root = t.testdir({ 'feed.jsonl': 'old\n', 'feed.jsonl.gz': 'old gzip' });
      const failed = await writeUnderLimit(root, 1024, 16 * 1024 * 1024, offThread);
      t.match(failed.write, /^(EFBIG)?$/, 'a write may fail already');
      t.equal(failed.commit, 'EFBIG', 'the commit rejects with the code of the failed write');
      t.match(failed.message, /file too large/);
      t.same(fs.readdirSync(root).sort(), ['feed.jsonl', 'feed.jsonl.gz'], 'no temporary is left');
      t.equal(fs.readFileSync(path.join(root, 'feed.jsonl'), 'utf8'), 'old\n', 'nor replaced');
    },
  );

  t.test(`under the limit the same writes publish (${how})`, async (t) => {
    const root = t.testdir({});
    const done = await writeUnderLimit(root, 64 * 1024, 2 * 1024 * 1024, offThread);
    t.same(done, { commit: 'ok' });
    t.ok(fs.statSync(path.join(root, 'feed.jsonl')).size >= 2 * 1024 * 1024);
  });
}
