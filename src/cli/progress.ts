/**
 * The progress line of long CLI runs (build, integrations sync, analytics import, store copy):
 * "feeds  120,000 / 300,000 products  98,000/s  ETA 2 s", redrawn at most every 100 ms on
 * one line of a terminal. Callers draw it only when stderr is a TTY and --json is not given.
 */
export interface ProgressUpdate {
  stage: string;
  done: number;
  /** 0 when unknown: no ETA is shown. */
  total: number;
}

/** One progress line. `unit` names what is counted ("products", "lines"). */
export function formatProgress(
  update: ProgressUpdate,
  elapsedMs: number,
  unit = 'products',
): string {
  const done = Math.min(update.done, update.total || update.done);
  const rate = elapsedMs > 0 ? (done / elapsedMs) * 1000 : 0;
  const left = update.total - done;
  const eta = rate > 0 && left > 0 ? `ETA ${formatDuration((left / rate) * 1000)}` : '';
  const n = (v: number) => Math.round(v).toLocaleString('en');
  const of = update.total > 0 || update.done === 0 ? ` / ${n(update.total)}` : '';
  return `${update.stage}  ${n(done)}${of} ${unit}  ${n(rate)}/s  ${eta}`.trimEnd();
}

export function formatDuration(ms: number): string {
  const s = Math.ceil(ms / 1000);
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min ${s % 60} s`;
}

/** A progress line on `stream`: update() redraws (throttled), clear() erases it. */
export function createProgress(stream: NodeJS.WritableStream, unit = 'products') {
  const started = performance.now();
  let lastDrawn = 0;
  return {
    update: (update: ProgressUpdate): void => {
      const now = performance.now();
      if (now - lastDrawn < 100 && update.done < update.total) return;
      lastDrawn = now;
      stream.write(`\r\x1b[2K${formatProgress(update, now - started, unit)}`);
    },
    clear: (): void => {
      stream.write('\r\x1b[2K');
    },
  };
}
