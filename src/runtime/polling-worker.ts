/** The timer a PollingWorker waits on; tests pass one they move by hand. */
export interface Timers {
  setTimeout(run: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** Node's timers, unref'd: a waiting worker never keeps the process alive. */
export const nodeTimers: Timers = {
  setTimeout: (run, ms) => setTimeout(run, ms).unref(),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

export interface PollingWorkerOptions {
  /**
   * One pass. Resolves to true when there may be more to do at once: the next pass then runs
   * without waiting.
   */
  tick: () => Promise<boolean | void> | boolean | void;
  /** The wait between passes, in ms. */
  intervalMs: number;
  /** A pass that threw or rejected (the owner logs it); the worker goes on. */
  onError: (err: unknown) => void;
  /**
   * After failed passes in a row, wait intervalMs * factor^(failures - 1), at most maxMs, until
   * a pass succeeds (default: no back-off, the next pass after intervalMs).
   */
  backoff?: { factor: number; maxMs: number };
  timers?: Timers;
}

/**
 * The loop every background poller of `serve` runs on: a pass, then a wait of intervalMs (none
 * when the pass said there is more, or a nudge came during it), a longer wait after failures
 * when a back-off is set. One pass at a time; stop() waits for the pass under way.
 */
export class PollingWorker {
  private readonly timers: Timers;
  private timer: unknown;
  private pass: Promise<void> | undefined;
  private rerun = false;
  private running = false;
  private stopped = false;
  private failures = 0;

  constructor(private readonly options: PollingWorkerOptions) {
    this.timers = options.timers ?? nodeTimers;
  }

  /** Starts polling: the first pass after `delayMs` (default at once). Once only. */
  start(delayMs = 0): void {
    if (this.running || this.stopped) return;
    this.running = true;
    this.schedule(delayMs);
  }

  /** Runs a pass now, or right after the one under way. Ignored unless running. */
  nudge(): void {
    if (!this.running) return;
    if (this.pass) this.rerun = true;
    else this.schedule(0);
  }

  /** Whether a pass is under way. */
  get busy(): boolean {
    return this.pass !== undefined;
  }

  /** Stops polling: no pass starts after this; resolves when the pass under way has ended. */
  async stop(): Promise<void> {
    this.running = false;
    this.stopped = true;
    this.timers.clearTimeout(this.timer);
    this.timer = undefined;
    await this.pass;
  }

  private schedule(ms: number): void {
    this.timers.clearTimeout(this.timer);
    this.timer = this.timers.setTimeout(() => this.runPass(), ms);
  }

  private runPass(): void {
    this.timer = undefined;
    if (!this.running || this.pass) return;
    let more = false;
    let failed = false;
    this.pass = (async () => {
      more = (await this.options.tick()) === true;
    })()
      .catch((err: unknown) => {
        failed = true;
        this.options.onError(err);
      })
      .finally(() => {
        this.pass = undefined;
        this.failures = failed ? this.failures + 1 : 0;
        const again = this.rerun || (more && !failed);
        this.rerun = false;
        if (this.running) this.schedule(again ? 0 : this.waitMs());
      });
  }

  private waitMs(): number {
    const { intervalMs, backoff } = this.options;
    if (!backoff || this.failures === 0) return intervalMs;
    return Math.min(backoff.maxMs, intervalMs * backoff.factor ** (this.failures - 1));
  }
}
