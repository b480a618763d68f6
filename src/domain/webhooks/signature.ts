import { createHmac, createSecretKey, randomBytes, type KeyObject } from 'node:crypto';

/** How long the secret before a rotation keeps signing, beside the new one. */
export const ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000;

const SECRET_PREFIX = 'whsec_';
/** Bytes of key a secret may carry (CONTRACT part 7) and the number a generated one has. */
const MIN_KEY_BYTES = 24;
const MAX_KEY_BYTES = 64;
const GENERATED_KEY_BYTES = 32;

/**
 * A new signing secret in the Standard Webhooks form: `whsec_` and the standard base64 of
 * 32 random bytes (256 bits).
 */
export function generateWebhookSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(GENERATED_KEY_BYTES).toString('base64')}`;
}

/**
 * The key bytes of a secret of the form CONTRACT part 7 accepts (`whsec_` + canonical
 * standard base64 of 24 to 64 bytes), or undefined when the secret has another form.
 */
export function webhookSecretKey(secret: string): Buffer | undefined {
  if (!secret.startsWith(SECRET_PREFIX)) return undefined;
  const encoded = secret.slice(SECRET_PREFIX.length);
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded)) return undefined;
  const key = Buffer.from(encoded, 'base64');
  // Node's decoder skips what it cannot read; a canonical round trip rules that out.
  if (key.toString('base64') !== encoded) return undefined;
  return key.length >= MIN_KEY_BYTES && key.length <= MAX_KEY_BYTES ? key : undefined;
}

/** Says what is wrong with a secret a client gives, or undefined when it is accepted. */
export function webhookSecretProblem(secret: string): string | undefined {
  return webhookSecretKey(secret) === undefined
    ? `must be "${SECRET_PREFIX}" followed by the standard base64 of ${MIN_KEY_BYTES} to ${MAX_KEY_BYTES} bytes`
    : undefined;
}

/**
 * Keys by secret, as KeyObjects: every delivery signs twice (two key forms), and an endpoint
 * has one or two secrets. Node 24's createHmac takes about 12 us to accept a Buffer key and
 * 2 us for a KeyObject (measured with 1 KB bodies; Node 26 takes 2 us for both); a string key
 * is encoded again on every call.
 */
const standardKeys = new Map<string, KeyObject>();
const wholeKeys = new Map<string, KeyObject>();

function cachedKey(keys: Map<string, KeyObject>, secret: string, bytes: () => Buffer): KeyObject {
  let key = keys.get(secret);
  if (!key) {
    key = createSecretKey(bytes());
    if (keys.size >= 1_000) keys.clear();
    keys.set(secret, key);
  }
  return key;
}

/**
 * The key of `webhook-signature` for a stored secret: its base64 bytes, as the Standard
 * Webhooks libraries read it. A secret stored before that form was required (a client's
 * own string) keys with its UTF-8 bytes; its receiver passes them raw to the library.
 */
function standardKey(secret: string): KeyObject {
  return cachedKey(
    standardKeys,
    secret,
    () => webhookSecretKey(secret) ?? Buffer.from(secret, 'utf8'),
  );
}

/** Hex HMAC-SHA256 of a message; the key is the whole secret string, prefix included. */
export function hmacHex(secret: string, message: string): string {
  const key = cachedKey(wholeKeys, secret, () => Buffer.from(secret, 'utf8'));
  return createHmac('sha256', key).update(message).digest('hex');
}

/**
 * The secrets that sign a delivery now: the current one, and the one before the last
 * rotation while its 24 hours of overlap last.
 */
export function signingSecrets(
  webhook: {
    secret: string;
    previous_secret: string | null;
    previous_secret_expires_at: string | null;
  },
  now: Date,
): string[] {
  const previousValid =
    webhook.previous_secret !== null &&
    webhook.previous_secret_expires_at !== null &&
    Date.parse(webhook.previous_secret_expires_at) > now.getTime();
  return previousValid ? [webhook.secret, webhook.previous_secret!] : [webhook.secret];
}

/**
 * The body of a delivery, `{event, data, timestamp}` (SPEC part 2). `data` is the event's
 * JSON text as recorded, spliced in rather than parsed and re-serialised, so every retry
 * sends the same bytes and the worker spends no time on it.
 */
export function buildDeliveryBody(event: string, dataJson: string, timestamp: string): string {
  return `{"event":${JSON.stringify(event)},"data":${dataJson},"timestamp":${JSON.stringify(timestamp)}}`;
}

/**
 * The identity and signature headers of one attempt (CONTRACT part 7), one signature per
 * signing secret, newest first:
 * - `X-Webhook-Signature`: hex HMAC-SHA256 of the raw body keyed with the whole secret
 *   string, comma-separated (SPEC part 5);
 * - the Standard Webhooks trio: `webhook-id` (the event id, the same on every retry),
 *   `webhook-timestamp` (Unix seconds of this attempt) and `webhook-signature`:
 *   `v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`, space-separated, keyed with
 *   the secret's base64 bytes, so that the `standardwebhooks` and Svix libraries verify it;
 * - `X-Webhook-Id` and `X-Webhook-Timestamp` repeat the first two of the trio.
 */
export function signatureHeaders(
  eventId: string,
  body: string,
  secrets: string[],
  timestampSeconds: number,
): Record<string, string> {
  const t = String(timestampSeconds);
  const signed = `${eventId}.${t}.${body}`;
  return {
    'X-Webhook-Id': eventId,
    'X-Webhook-Timestamp': t,
    'X-Webhook-Signature': secrets.map((s) => hmacHex(s, body)).join(','),
    'webhook-id': eventId,
    'webhook-timestamp': t,
    'webhook-signature': secrets
      .map((s) => `v1,${createHmac('sha256', standardKey(s)).update(signed).digest('base64')}`)
      .join(' '),
  };
}
