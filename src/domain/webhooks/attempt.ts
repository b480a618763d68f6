import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import type { Db } from '../../db/store.js';
import type { DeliveryStatus, WebhookRow } from '../../db/schema.js';
import { VERSION } from '../../version.js';
import { postDelivery, type PostOutcome } from './sender.js';
import { signatureHeaders, signingSecrets } from './signature.js';

export const USER_AGENT = `agentshelf/${VERSION}`;

/** What sending and recording an attempt needs; the worker and the API share it. */
export interface DeliveryContext {
  db: Db;
  config: Config;
  logger: Logger;
  now: () => Date;
}

export interface SendOptions {
  agents?: Parameters<typeof postDelivery>[0]['agents'];
  signal?: AbortSignal;
}

export interface SentAttempt {
  startedAt: Date;
  outcome: PostOutcome;
}

/** Signs a body with the endpoint's current secrets and POSTs it. */
export async function sendToEndpoint(
  ctx: DeliveryContext,
  webhook: WebhookRow,
  eventId: string,
  body: string,
  options: SendOptions = {},
): Promise<SentAttempt> {
  const startedAt = ctx.now();
  const headers = {
    ...signatureHeaders(
      eventId,
      body,
      signingSecrets(webhook, startedAt),
      Math.floor(startedAt.getTime() / 1000),
    ),
    'Content-Type': 'application/json',
    'User-Agent': USER_AGENT,
  };
  const outcome = await postDelivery({
    url: webhook.url,
    body,
    headers,
    timeoutMs: ctx.config.WEBHOOK_TIMEOUT_SECONDS * 1000,
    allowPrivate: ctx.config.ALLOW_PRIVATE_TARGETS,
    agents: options.agents,
    signal: options.signal,
  });
  return { startedAt, outcome };
}

/**
 * The state after a failed scheduled attempt number `attempt`: the next try after the
 * schedule's delay (or the receiver's Retry-After), or failed when the schedule is spent.
 */
export function nextAfterFailure(
  attempt: number,
  schedule: number[],
  retryAfterSeconds: number | undefined,
  now: Date,
): { status: DeliveryStatus; next_attempt_at: string | null } {
  if (attempt > schedule.length) return { status: 'failed', next_attempt_at: null };
  const delaySeconds = retryAfterSeconds ?? schedule[attempt - 1]!;
  return {
    status: 'pending',
    next_attempt_at: new Date(now.getTime() + delaySeconds * 1000).toISOString(),
  };
}
