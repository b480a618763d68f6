import { parseArgs, type ParseArgsConfig } from 'node:util';

export class UsageError extends Error {}

type Options = NonNullable<ParseArgsConfig['options']>;

/** parseArgs with `--help` and `--json` on every verb; unknown flags are a UsageError. */
export function parseVerbArgs<O extends Options>(argv: string[], options: O) {
  try {
    return parseArgs({
      args: argv,
      options: { help: { type: 'boolean', short: 'h' }, json: { type: 'boolean' }, ...options },
      allowPositionals: true,
      strict: true,
    });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

/** A whole number flag, or a UsageError naming the flag. */
export function intFlag(value: string | undefined, name: string, min = 0): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) < min)
    throw new UsageError(`--${name} must be a whole number of at least ${min}, got '${value}'`);
  return Number(value);
}
