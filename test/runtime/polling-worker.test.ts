import t from 'tap';
import { PollingWorker, type Timers } from '../../src/runtime/polling-worker.js';

/** Timers moved by hand: advance(ms) runs, in order, those due by then. */
class ManualTimers implements Timers {
  now = 0;
  private seq = 0;
  private readonly pending = new Map<number, { at: number; run: () => void }>();

  setTimeout(run: () => void, ms: number): number {
    const id = ++this.seq;
    this.pending.set(id, { at: this.now + ms, run });
    return id;
  }

  clearTimeout(id: unknown): void {
    this.pending.delete(id as number);
  }

  /** In how many ms the next timer fires (undefined: none waits). */
  nextIn(): number | undefined {
    const ats = [...this.pending.values()].map((p) => p.at);
    return ats.length ? Math.min(...ats) - this.now : undefined;
  }

  async advance(ms: number): Promise<void> {
    const to = this.now + ms;
    for (;;) {
      const due = [...this.pending.entries()]
        .filter(([, p]) => p.at <= to)
        .sort((a, b) => a[1].at - b[1].at || a[0] - b[0])[0];
      if (!due) break;
      this.pending.delete(due[0]);
      this.now = due[1].at;
      due[1].run();
      await settled();
    }
    this.now = to;
  }
}

/** Lets the promises of a pass settle (no I/O happens in these passes). */
const settled = () => new Promise((resolve) => setImmediate(resolve));

/** A pass the test ends by hand. */
function controlledTick() {
  const passes: { end: (more?: boolean) => void; fail: (err: Error) => void }[] = [];
  const tick = () =>
    new Promise<boolean>((resolve, reject) =>
      passes.push({ end: (more = false) => resolve(more), fail: reject }),
    );
  return { passes, tick };
}

t.test('polls every intervalMs, the first pass after the start delay', async (t) => {
  const timers = new ManualTimers();
  let passes = 0;
  const worker = new PollingWorker({
    tick: () => void passes++,
    intervalMs: 1000,
    onError: () => t.fail('no error'),
    timers,
  });
  worker.start(500);
  await timers.advance(499);
  t.equal(passes, 0);
  await timers.advance(1);
  t.equal(passes, 1);
  t.equal(timers.nextIn(), 1000, 'waits intervalMs after a pass');
  await timers.advance(999);
  t.equal(passes, 1);
  await timers.advance(1);
  t.equal(passes, 2);
  await worker.stop();
  t.equal(timers.nextIn(), undefined, 'no timer after stop');
});

t.test('a nudge wakes it at once, or runs again right after the pass under way', async (t) => {
  const timers = new ManualTimers();
  const { passes, tick } = controlledTick();
  const worker = new PollingWorker({ tick, intervalMs: 1000, onError: () => undefined, timers });
  worker.nudge();
  t.equal(timers.nextIn(), undefined, 'ignored before start');
  worker.start();
  await timers.advance(0);
  t.equal(passes.length, 1);
  passes[0]!.end();
  await settled();
  t.equal(timers.nextIn(), 1000);
  worker.nudge();
  t.equal(timers.nextIn(), 0, 'idle: woken at once');
  await timers.advance(0);
  t.equal(passes.length, 2);
  worker.nudge();
  worker.nudge();
  t.equal(timers.nextIn(), undefined, 'busy: nothing scheduled during the pass');
  t.ok(worker.busy);
  passes[1]!.end();
  await settled();
  t.equal(timers.nextIn(), 0, 'the nudges during the pass give one pass right after');
  await timers.advance(0);
  t.equal(passes.length, 3);
  passes[2]!.end(true);
  await settled();
  t.equal(timers.nextIn(), 0, 'a pass with more to do is followed at once');
  await timers.advance(0);
  passes[3]!.end();
  await settled();
  t.equal(timers.nextIn(), 1000);
  await worker.stop();
});

t.test(
  'backs off after failures, up to maxMs, and returns to intervalMs after a success',
  async (t) => {
    const timers = new ManualTimers();
    const { passes, tick } = controlledTick();
    const errors: unknown[] = [];
    const worker = new PollingWorker({
      tick,
      intervalMs: 100,
      onError: (err) => errors.push(err),
      backoff: { factor: 2, maxMs: 350 },
      timers,
    });
    worker.start();
    const waits: number[] = [];
    for (let i = 0; i < 5; i++) {
      await timers.advance(timers.nextIn()!);
      passes[i]!.fail(new Error(`failure ${i}`));
      await settled();
      waits.push(timers.nextIn()!);
    }
    t.same(waits, [100, 200, 350, 350, 350]);
    t.equal(errors.length, 5);
    await timers.advance(timers.nextIn()!);
    passes[5]!.end(true);
    await settled();
    t.equal(timers.nextIn(), 0);
    await timers.advance(0);
    passes[6]!.end();
    await settled();
    t.equal(timers.nextIn(), 100, 'back to the interval');
    await worker.stop();
  },
);

t.test(
  'without a back-off a failed pass is retried after intervalMs, and a throw is caught',
  async (t) => {
    const timers = new ManualTimers();
    const errors: unknown[] = [];
    const worker = new PollingWorker({
      tick: () => {
        throw new Error('thrown');
      },
      intervalMs: 250,
      onError: (err) => errors.push(err),
      timers,
    });
    worker.start();
    await timers.advance(0);
    await timers.advance(250);
    t.equal(errors.length, 2);
    t.match((errors[0] as Error).message, 'thrown');
    t.equal(timers.nextIn(), 250);
    await worker.stop();
  },
);

t.test('stop waits for the pass under way, and no pass starts after it', async (t) => {
  const timers = new ManualTimers();
  const { passes, tick } = controlledTick();
  const worker = new PollingWorker({ tick, intervalMs: 10, onError: () => undefined, timers });
  worker.start();
  await timers.advance(0);
  let stopped = false;
  const stopping = worker.stop().then(() => (stopped = true));
  await settled();
  t.equal(stopped, false, 'still waiting for the pass');
  worker.nudge();
  passes[0]!.end(true);
  await stopping;
  t.equal(stopped, true);
  t.equal(timers.nextIn(), undefined, 'nothing scheduled: neither the nudge nor the "more"');
  await timers.advance(1000);
  t.equal(passes.length, 1);
  worker.start();
  t.equal(timers.nextIn(), undefined, 'a stopped worker does not start again');
});
