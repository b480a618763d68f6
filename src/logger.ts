import { pino, type Logger } from 'pino';

/** Names of integration secrets, redacted wherever they appear at the top or one level down. */
const INTEGRATION_SECRETS = [
  'credentials',
  'access_token',
  'client_secret',
  'consumer_key',
  'consumer_secret',
  'webhook_secret',
  'password',
  'token',
];

/** JSON logs on stdout (stderr with `toStderr`, for verbs whose stdout is machine output). */
export function createLogger(level: string, options: { toStderr?: boolean } = {}): Logger {
  return pino(
    {
      level,
      base: { service: 'agentshelf' },
      redact: {
        paths: [
          'req.headers.authorization',
          'secret',
          'key',
          // Integration credentials, should a record or a request carrying them be logged.
          ...INTEGRATION_SECRETS.flatMap((name) => [name, `*.${name}`]),
          'headers["x-shopify-access-token"]',
          'headers.authorization',
          '*.headers["x-shopify-access-token"]',
          '*.headers.authorization',
        ],
        censor: '[redacted]',
      },
    },
    pino.destination({ dest: options.toStderr ? 2 : 1, sync: false }),
  );
}
