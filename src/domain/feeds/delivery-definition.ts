/**
 * A feed's delivery as it enters through the API: checked (credentials a push delivery needs,
 * the target through the outbound-address guard) and turned into the stored columns
 * (credentials encrypted as integrations' are). Refusals name the field (422).
 */
import { AppError, invalidField } from '../../errors.js';
import { checkHost, checkTarget, TargetRefusedError } from '../../net/target-guard.js';
import type { SecretBox } from '../integrations/secret-box.js';
import type { FeedCredentialsInput, StoredDelivery } from './delivery-schemas.js';

export interface DeliveryOptions {
  box?: SecretBox;
  allowPrivate?: boolean;
  /** The feed's profile and format, which a delivery type may require. */
  channel?: { profile: string; format: string };
}

/** Refuses a target the outbound guard refuses (422 naming delivery.host or delivery.url). */
export async function checkTargetOf(delivery: StoredDelivery, allowPrivate: boolean) {
  if (delivery.type === 'hosted') return;
  const field = { sftp: 'delivery.host', acp_feed_api: 'delivery.url', stripe: 'delivery.api_url' }[
    delivery.type
  ];
  try {
    if (delivery.type === 'sftp') await checkHost(delivery.host, { allowPrivate });
    else if (delivery.type === 'stripe') await checkTarget(delivery.api_url, { allowPrivate });
    else await checkTarget(delivery.url, { allowPrivate });
  } catch (err) {
    if (err instanceof TargetRefusedError) throw invalidField(field, `is refused: ${err.reason}`);
    throw err;
  }
}

/** The one profile and format a delivery type takes, and why (types absent take any). */
const CHANNEL_OF: Partial<Record<StoredDelivery['type'], [string, string, string]>> = {
  acp_feed_api: ['acp', 'jsonl', 'the Feed API upserts ACP Products'],
  stripe: ['stripe', 'csv', "Stripe's catalog import takes its product CSV"],
};

/**
 * The profile and format a delivery type takes (422): an acp_feed_api delivery upserts ACP
 * Products, so only an acp feed in jsonl; a stripe delivery imports a stripe feed in csv.
 * `field` names what the request changed: the delivery (`delivery.type`), or the feed's
 * `profile` or `format` when it keeps its delivery.
 */
export function checkDeliveryChannel(
  delivery: StoredDelivery,
  channel: { profile: string; format: string },
  field = 'delivery.type',
): void {
  const wanted = CHANNEL_OF[delivery.type];
  if (!wanted) return;
  const [profile, format, why] = wanted;
  if (channel.profile === profile && channel.format === format) return;
  const kept = field === 'delivery.type' ? '' : `; the feed keeps its ${delivery.type} delivery`;
  throw invalidField(
    field,
    `${delivery.type} takes ${/^[aeiou]/.test(profile) ? 'an' : 'a'} ${profile} feed in ${format} (${why})${kept}`,
  );
}

/** Stripe's secret (sk_) and restricted (rk_) API keys, test or live. */
const STRIPE_KEY = /^(?:sk|rk)_(?:test|live)_[A-Za-z0-9]{10,}$/;

/** The credentials a delivery type needs (422 naming credentials, or delivery.type). */
function checkCredentials(
  delivery: Exclude<StoredDelivery, { type: 'hosted' }>,
  credentials: FeedCredentialsInput | undefined,
  channel: DeliveryOptions['channel'],
): void {
  if (channel) checkDeliveryChannel(delivery, channel);
  if (delivery.type === 'stripe') {
    if (!credentials?.api_key) {
      throw new AppError(
        'missing_field',
        'A stripe delivery needs credentials: api_key (a secret or restricted key).',
        { field: 'credentials', reason: 'api_key is required' },
      );
    }
    if (!STRIPE_KEY.test(credentials.api_key)) {
      throw invalidField(
        'credentials.api_key',
        'must be a Stripe secret or restricted API key (sk_live_..., sk_test_..., rk_live_..., rk_test_...)',
      );
    }
    return;
  }
  if (delivery.type === 'acp_feed_api') {
    if (!credentials?.token) {
      throw new AppError('missing_field', 'An acp_feed_api delivery needs credentials: token.', {
        field: 'credentials',
        reason: 'token is required',
      });
    }
    return;
  }
  if (!credentials?.password && !credentials?.private_key) {
    throw new AppError(
      'missing_field',
      `An ${delivery.type} delivery needs credentials: password or private_key.`,
      { field: 'credentials', reason: 'password or private_key is required' },
    );
  }
}

/** The stored `delivery` and `credentials` of a definition (null, null: hosted). */
export async function deliveryColumns(
  delivery: StoredDelivery | undefined,
  credentials: FeedCredentialsInput | undefined,
  options: DeliveryOptions,
): Promise<{ delivery: string | null; credentials: string | null }> {
  if (delivery === undefined || delivery.type === 'hosted') {
    return { delivery: null, credentials: null };
  }
  checkCredentials(delivery, credentials, options.channel);
  await checkTargetOf(delivery, options.allowPrivate ?? false);
  if (!options.box) throw new Error('deliveryColumns: no SecretBox to encrypt credentials with');
  return {
    delivery: JSON.stringify(delivery),
    credentials: options.box.encrypt(JSON.stringify(credentials)),
  };
}
