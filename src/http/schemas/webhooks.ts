import {
  ALL_EVENTS,
  DeliveryListQuery,
  EventKinds,
  Secret,
  Webhook,
  WebhookAttempt,
  WebhookDelivery,
  WebhookListQuery,
  WebhookUpdate,
  WebhookUrl,
  WebhookWithSecret,
} from '../../domain/webhooks/schemas.js';
import { doc, docFields } from './registry.js';
import { pageQuery } from './shared.js';

/** The query strings of the endpoint and delivery lists, with numbers read from text. */
export const WebhookListQueryString = WebhookListQuery.extend(pageQuery);
export const DeliveryListQueryString = DeliveryListQuery.extend(pageQuery);

doc(
  EventKinds,
  `Event kinds to receive; absent or ["${ALL_EVENTS}"] means every kind, also kinds added later`,
);
doc(
  Secret,
  'Your own signing secret, whsec_ followed by the standard base64 of 24 to 64 bytes; never returned. Generated (whsec_ and 32 random bytes) when absent',
);
doc(
  WebhookUrl,
  'Where deliveries are POSTed: http(s); private, loopback and link-local addresses are refused unless ALLOW_PRIVATE_TARGETS=true',
);
docFields(WebhookUpdate, {
  status: 'disabled pauses deliveries; active resumes them',
  rotate_secret:
    'true: a new secret is generated and returned this once; the old one keeps signing for 24 hours',
  secret:
    'Replace the secret with your own (never returned); the old one keeps signing for 24 hours',
});
docFields(
  Webhook,
  {
    disabled_reason:
      'requested (PUT), endpoint_gone (the endpoint answered 410) or failing (every attempt failed for 3 days)',
    failing_since: 'Start of the current run of failed attempts; null after a success',
    previous_secret_expires_at:
      'Until then, deliveries are also signed with the secret before the last rotation',
  },
  {
    id: 'Webhook',
    description: 'A webhook endpoint; its secret is shown only when generated or rotated',
  },
);
docFields(WebhookWithSecret, { secret: 'The generated signing secret, shown this once' });
docFields(
  WebhookDelivery,
  {
    event_id: 'Sent as webhook-id and X-Webhook-Id, the same on every attempt',
    event: 'The event kind',
    status_code: "The last attempt's HTTP status",
    next_attempt_at: 'When a pending delivery is tried next; null while the endpoint is disabled',
  },
  {
    id: 'WebhookDelivery',
    description: 'One event for one endpoint, with the outcome of its last attempt',
  },
);
docFields(WebhookAttempt, { response_body: "The receiver's answer, first KiB" });
