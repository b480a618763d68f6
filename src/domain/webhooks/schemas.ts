import { z } from 'zod';
import { EVENT_TYPES } from '../events.js';
import { httpUrl } from '../fields.js';
import { pageFields } from '../pagination.js';
import { Pagination } from '../products/schemas.js';
import { webhookSecretProblem } from './signature.js';

/** The kind of the event a test delivery carries; it is never recorded in the outbox. */
export const TEST_EVENT_TYPE = 'webhook.test';
/** In `events`, alone: every kind, also kinds added later. */
export const ALL_EVENTS = '*';

export const WEBHOOK_STATUSES = ['active', 'disabled'] as const;
export const DISABLED_REASONS = ['requested', 'endpoint_gone', 'failing'] as const;
export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;

export const EventKinds = z
  .array(z.enum([...EVENT_TYPES, ALL_EVENTS]))
  .min(1)
  .max(EVENT_TYPES.length + 1)
  .check((ctx) => {
    if (ctx.value.includes(ALL_EVENTS) && ctx.value.length > 1) {
      ctx.issues.push({
        code: 'custom',
        input: ctx.value,
        message: `must not list "${ALL_EVENTS}" beside other kinds`,
      });
    }
  })
  .transform((kinds) => [...new Set(kinds)]);

export const Secret = z
  .string()
  .max(256)
  .check((ctx) => {
    const problem = webhookSecretProblem(ctx.value);
    if (problem) ctx.issues.push({ code: 'custom', input: ctx.value, message: problem });
  });

export const WebhookUrl = httpUrl(2048);

export const WebhookCreate = z.strictObject({
  url: WebhookUrl,
  events: EventKinds.optional(),
  secret: Secret.optional(),
});
export type WebhookCreateInput = z.infer<typeof WebhookCreate>;

export const WebhookUpdate = z
  .strictObject({
    url: WebhookUrl.optional(),
    events: EventKinds.optional(),
    status: z.enum(WEBHOOK_STATUSES).optional(),
    rotate_secret: z.boolean().optional(),
    secret: Secret.optional(),
  })
  .check((ctx) => {
    if (ctx.value.rotate_secret && ctx.value.secret !== undefined) {
      ctx.issues.push({
        code: 'custom',
        input: ctx.value.secret,
        path: ['secret'],
        message: 'cannot be given together with rotate_secret',
      });
    }
  });
export type WebhookUpdateInput = z.infer<typeof WebhookUpdate>;

export const Webhook = z.object({
  id: z.string(),
  url: z.string(),
  events: z.array(z.string()),
  status: z.enum(WEBHOOK_STATUSES),
  disabled_reason: z.enum(DISABLED_REASONS).nullable(),
  disabled_at: z.string().nullable(),
  failing_since: z.string().nullable(),
  previous_secret_expires_at: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type Webhook = z.infer<typeof Webhook>;

export const WebhookWithSecret = Webhook.extend({
  secret: z.string(),
});

export const WebhookListQuery = z.strictObject(pageFields);

export const WebhookList = z.object({ webhooks: z.array(Webhook), pagination: Pagination });

export const WebhookDelivery = z.object({
  id: z.string(),
  webhook_id: z.string(),
  event_id: z.string(),
  event: z.string(),
  test: z.boolean(),
  status: z.enum(DELIVERY_STATUSES),
  attempts: z.int(),
  status_code: z.int().nullable(),
  duration_ms: z.int().nullable(),
  error: z.string().nullable(),
  last_attempt_at: z.string().nullable(),
  next_attempt_at: z.string().nullable(),
  created_at: z.string(),
});
export type WebhookDelivery = z.infer<typeof WebhookDelivery>;

export const WebhookAttempt = z.object({
  attempt: z.int(),
  trigger: z.enum(['schedule', 'manual', 'test']),
  started_at: z.string(),
  status_code: z.int().nullable(),
  duration_ms: z.int(),
  error: z.string().nullable(),
  response_body: z.string().nullable(),
});

export const WebhookDeliveryDetail = WebhookDelivery.extend({ history: z.array(WebhookAttempt) });

export const DeliveryListQuery = z.strictObject({
  ...pageFields,
  status: z.enum(DELIVERY_STATUSES).optional(),
  event: z.enum([...EVENT_TYPES, TEST_EVENT_TYPE]).optional(),
});
export type DeliveryListQuery = z.infer<typeof DeliveryListQuery>;

export const DeliveryList = z.object({
  deliveries: z.array(WebhookDelivery),
  pagination: Pagination,
});
