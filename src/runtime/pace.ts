import { performance } from 'node:perf_hooks';

/**
 * The longest a long task (a feed's parse, a sync's apply) runs before the event loop gets a
 * turn, so an API request never waits long behind it (CONTRACT part 8).
 */
export const SLICE_MS = 10;

/** A turn for the event loop's other work (timers, sockets: the API's requests). */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * A long task's clock: `turn()` gives the event loop a turn when the task has run `sliceMs`
 * since it last did, and costs nothing otherwise. Call it between steps of bounded size.
 */
export class Pacer {
  private since = performance.now();

  constructor(private readonly sliceMs = SLICE_MS) {}

  async turn(): Promise<void> {
    if (performance.now() - this.since < this.sliceMs) return;
    await yieldToEventLoop();
    this.since = performance.now();
  }
}
