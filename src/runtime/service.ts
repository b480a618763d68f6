/**
 * The life cycle of a long-lived part of `serve` (a server, a worker, a schedule): started
 * once, stopped once. A list of services starts in order and stops in reverse (see Services).
 */
export interface Service {
  /** Named in the log when its stop fails (`shutdown: <name> failed`). */
  readonly name: string;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** Where a failed stop is reported (a pino logger fits). */
export interface ServiceLog {
  error(data: { err: unknown }, message: string): void;
}

/** A service from two functions; a missing one does nothing. */
export function service(
  name: string,
  parts: { start?: () => unknown; stop?: () => unknown },
): Service {
  return {
    name,
    start: async () => {
      await parts.start?.();
    },
    stop: async () => {
      await parts.stop?.();
    },
  };
}

/** The error a failed stop is thrown as, naming the service. */
function stopFailure(name: string, err: unknown): Error {
  return new Error(`shutdown: ${name} failed: ${String(err)}`, { cause: err });
}

/**
 * Runs each stop, every one whatever failed before it; logs each failure with the service's
 * name; resolves to the failures (the errors of a group's members, one by one).
 */
async function stopEach(
  services: readonly Service[],
  log: ServiceLog,
  together: boolean,
): Promise<Error[]> {
  const stopOne = async (s: Service): Promise<Error[]> => {
    if (s instanceof ServiceGroup) return s.stopMembers(log);
    try {
      await s.stop();
      return [];
    } catch (err) {
      log.error({ err }, `shutdown: ${s.name} failed`);
      return [stopFailure(s.name, err)];
    }
  };
  if (together) return (await Promise.all(services.map(stopOne))).flat();
  const failures: Error[] = [];
  for (const s of services) failures.push(...(await stopOne(s)));
  return failures;
}

/**
 * Services started in order and stopped all at once (each still logged by its own name):
 * those that drain in parallel share one grace period instead of waiting one after another.
 */
class ServiceGroup implements Service {
  private log: ServiceLog | undefined;

  constructor(
    readonly name: string,
    private readonly members: readonly Service[],
  ) {}

  async start(): Promise<void> {
    const started: Service[] = [];
    try {
      for (const s of this.members) {
        await s.start();
        started.push(s);
      }
    } catch (err) {
      if (this.log) await stopEach(started, this.log, true);
      else await Promise.allSettled(started.map((s) => s.stop()));
      throw err;
    }
  }

  async stop(): Promise<void> {
    const failures = await this.stopMembers(this.log ?? { error: () => undefined });
    if (failures.length > 0) throw failures[0]!;
  }

  /** @internal Runs every member's stop at once; each failure is logged by its name. */
  stopMembers(log: ServiceLog): Promise<Error[]> {
    return stopEach(this.members, log, true);
  }

  /** @internal */
  logTo(log: ServiceLog): void {
    this.log = log;
  }
}

/** A group of services that start in order and stop together (see ServiceGroup). */
export function inParallel(name: string, members: readonly Service[]): Service {
  return new ServiceGroup(name, members);
}

/**
 * A list of services: start() starts them in order (when one fails, those already started
 * are stopped in reverse and its error is thrown); stop() stops the started ones in reverse,
 * running every stop whatever failed before it, logging each failure as `shutdown: <name>
 * failed`, then throws the first. Both run once; a second call returns the first's promise.
 */
export class Services {
  private readonly started: Service[] = [];
  private starting: Promise<void> | undefined;
  private stopping: Promise<void> | undefined;

  constructor(
    private readonly list: readonly Service[],
    private readonly log: ServiceLog,
  ) {
    for (const s of list) if (s instanceof ServiceGroup) s.logTo(log);
  }

  start(): Promise<void> {
    return (this.starting ??= (async () => {
      for (const s of this.list) {
        if (this.stopping) break;
        try {
          await s.start();
        } catch (err) {
          await this.stop().catch(() => undefined);
          throw err;
        }
        this.started.push(s);
      }
    })());
  }

  stop(): Promise<void> {
    return (this.stopping ??= (async () => {
      const failures = await stopEach([...this.started].reverse(), this.log, false);
      if (failures.length > 0) throw failures[0]!;
    })());
  }
}
