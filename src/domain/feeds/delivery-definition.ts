/**
 * A feed's delivery as it enters through the API: checked (credentials a push delivery needs,
 * the target through the outbound-address guard) and turned into the stored columns
 * (credentials encrypted as integrations' are). Refusals name the field (422).
 */
import { AppError, invalidField } from '../../errors.js';
import { checkHost, TargetRefusedError } from '../../net/target-guard.js';
import type { SecretBox } from '../integrations/secret-box.js';
import type { FeedCredentialsInput, StoredDelivery } from './delivery-schemas.js';

export interface DeliveryOptions {
  box?: SecretBox;
  allowPrivate?: boolean;
}

/** Refuses a target the outbound guard refuses (422 naming delivery.host). */
export async function checkTargetOf(delivery: StoredDelivery, allowPrivate: boolean) {
  if (delivery.type === 'hosted') return;
  try {
    await checkHost(delivery.host, { allowPrivate });
  } catch (err) {
    if (err instanceof TargetRefusedError)
      throw invalidField('delivery.host', `is refused: ${err.reason}`);
    throw err;
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
  if (!credentials?.password && !credentials?.private_key) {
    throw new AppError(
      'missing_field',
      `An ${delivery.type} delivery needs credentials: password or private_key.`,
      {
        field: 'credentials',
        reason: 'password or private_key is required',
      },
    );
  }
  await checkTargetOf(delivery, options.allowPrivate ?? false);
  if (!options.box) throw new Error('deliveryColumns: no SecretBox to encrypt credentials with');
  return {
    delivery: JSON.stringify(delivery),
    credentials: options.box.encrypt(JSON.stringify(credentials)),
  };
}
