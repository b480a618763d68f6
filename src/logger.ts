import { pino, type Logger } from 'pino';

/** JSON logs on stdout (stderr with `toStderr`, for verbs whose stdout is machine output). */
export function createLogger(level: string, options: { toStderr?: boolean } = {}): Logger {
  return pino(
    {
      level,
      base: { service: 'agentshelf' },
      redact: { paths: ['req.headers.authorization', 'secret', 'key'], censor: '[redacted]' },
    },
    pino.destination({ dest: options.toStderr ? 2 : 1, sync: false }),
  );
}
