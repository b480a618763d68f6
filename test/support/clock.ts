/** A clock a test moves by hand; pass `clock.now` to startTestServer. */
export interface TestClock {
  now: () => Date;
  /** Milliseconds since the epoch. */
  ms(): number;
  advance(seconds: number): void;
  set(iso: string): void;
}

export function clockAt(iso: string): TestClock {
  let ms = Date.parse(iso);
  if (Number.isNaN(ms)) throw new Error(`not a date: ${iso}`);
  return {
    now: () => new Date(ms),
    ms: () => ms,
    advance: (seconds) => {
      ms += Math.round(seconds * 1000);
    },
    set: (to) => {
      ms = Date.parse(to);
    },
  };
}

/** Unix seconds of an ISO date-time. */
export function unix(iso: string): number {
  return Date.parse(iso) / 1000;
}
