import fs from 'node:fs';
import type { Test } from 'tap';

/**
 * A fresh directory for the test (tap's t.testdir()), removed by a teardown of ours instead of
 * tap's own removal. tap 21 removes a t.testdir() before it runs the t.teardown()s registered
 * after it (each wraps the test's end when first called, and the one wrapped last runs its part
 * last), so a server or child process started in that directory was still running, and
 * writing, while its directory went: a report file written then made the removal fail with
 * ENOTEMPTY and the file time out. Teardowns run last in, first out: registered here, before
 * the server's or the children's, this removal runs after they stopped.
 */
export function ownTestDir(t: Test): string {
  const saved = t.saveFixture;
  t.saveFixture = true;
  const dir = t.testdir({});
  t.saveFixture = saved;
  t.teardown(() => fs.promises.rm(dir, { recursive: true, force: true }));
  return dir;
}
