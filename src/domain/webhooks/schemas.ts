import { z } from 'zod';
import { EVENT_TYPES } from '../events.js';
import { httpUrl } from '../fields.js';
import { Pagination } from '../products/schemas.js';
import { webhookSecretProblem } from './signature.js';

/** The kind of the event a test delivery carries; it is never recorded in the outbox. */
export const TEST_EVENT_TYPE = 'webhook.test';
/** In `events`, alone: every kind, also kinds added later. */
export const ALL_EVENTS = '*';

export const WEBHOOK_STATUSES = ['active', 'disabled'] as const;
export const DISABLED_REASONS = ['requested', 'endpoint_gone', 'failing'] as const;
export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;

const EventKinds = z
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
  .transform((kinds) => [...new Set(kinds)])
  .meta({
    description: `Event kinds to receive; absent or ["${ALL_EVENTS}"] means every kind, also kinds added later`,
  });

const Secret = z
  .string()
  .max(256)
  .check((ctx) => {
    const problem = webhookSecretProblem(ctx.value);
    if (problem) ctx.issues.push({ code: 'custom', input: ctx.value, message: problem });
  })
  .meta({
    description:
      'Your own signing secret, whsec_ followed by the standard base64 of 24 to 64 bytes; never returned. Generated (whsec_ and 32 random bytes) when absent',
  });

const WebhookUrl = httpUrl(2048).meta({
  description:
    'Where deliveries are POSTed: http(s); private, loopback and link-local addresses are refused unless ALLOW_PRIVATE_TARGETS=true',
});

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
    status: z
      .enum(WEBHOOK_STATUSES)
      .optional()
      .meta({ description: 'disabled pauses deliveries; active resumes them' }),
    rotate_secret: z.boolean().optional().meta({
      description:
        'true: a new secret is generated and returned this once; the old one keeps signing for 24 hours',
    }),
    secret: Secret.optional().meta({
      description:
        'Replace the secret with your own (never returned); the old one keeps signing for 24 hours',
    }),
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

export const Webhook = z
  .object({
    id: z.string(),
    url: z.string(),
    events: z.array(z.string()),
    status: z.enum(WEBHOOK_STATUSES),
    disabled_reason: z.enum(DISABLED_REASONS).nullable().meta({
      description:
        'requested (PUT), endpoint_gone (the endpoint answered 410) or failing (every attempt failed for 3 days)',
    }),
    disabled_at: z.string().nullable(),
    failing_since: z
      .string()
      .nullable()
      .meta({ description: 'Start of the current run of failed attempts; null after a success' }),
    previous_secret_expires_at: z.string().nullable().meta({
      description:
        'Until then, deliveries are also signed with the secret before the last rotation',
    }),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ description: 'A webhook endpoint; its secret is shown only when generated or rotated' });
export type Webhook = z.infer<typeof Webhook>;

export const WebhookWithSecret = Webhook.extend({
  secret: z.string().meta({ description: 'The generated signing secret, shown this once' }),
});

export const WebhookListQuery = z.strictObject({
  limit: z.coerce.number<string>().int().min(1).max(250).default(50),
  offset: z.coerce.number<string>().int().min(0).max(1_000_000_000).default(0),
});

export const WebhookList = z.object({ webhooks: z.array(Webhook), pagination: Pagination });

export const WebhookDelivery = z
  .object({
    id: z.string(),
    webhook_id: z.string(),
    event_id: z.string().meta({ description: 'Sent as X-Webhook-Id, the same on every attempt' }),
    event: z.string().meta({ description: 'The event kind' }),
    test: z.boolean(),
    status: z.enum(DELIVERY_STATUSES),
    attempts: z.int(),
    status_code: z.int().nullable().meta({ description: "The last attempt's HTTP status" }),
    duration_ms: z.int().nullable(),
    error: z.string().nullable(),
    last_attempt_at: z.string().nullable(),
    next_attempt_at: z.string().nullable().meta({
      description: 'When a pending delivery is tried next; null while the endpoint is disabled',
    }),
    created_at: z.string(),
  })
  .meta({ description: 'One event for one endpoint, with the outcome of its last attempt' });
export type WebhookDelivery = z.infer<typeof WebhookDelivery>;

export const WebhookAttempt = z.object({
  attempt: z.int(),
  trigger: z.enum(['schedule', 'manual', 'test']),
  started_at: z.string(),
  status_code: z.int().nullable(),
  duration_ms: z.int(),
  error: z.string().nullable(),
  response_body: z.string().nullable().meta({ description: "The receiver's answer, first KiB" }),
});

export const WebhookDeliveryDetail = WebhookDelivery.extend({ history: z.array(WebhookAttempt) });

export const DeliveryListQuery = z.strictObject({
  limit: z.coerce.number<string>().int().min(1).max(250).default(50),
  offset: z.coerce.number<string>().int().min(0).max(1_000_000_000).default(0),
  status: z.enum(DELIVERY_STATUSES).optional(),
  event: z.enum([...EVENT_TYPES, TEST_EVENT_TYPE]).optional(),
});
export type DeliveryListQuery = z.infer<typeof DeliveryListQuery>;

export const DeliveryList = z.object({
  deliveries: z.array(WebhookDelivery),
  pagination: Pagination,
});
