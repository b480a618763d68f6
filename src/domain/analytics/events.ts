import { existingProductIds } from '../../db/queries/analytics.js';
import type { Executor } from '../../db/transaction.js';
import { AppError } from '../../errors.js';
import { isCurrency, MoneyError, toMinorUnits } from '../money.js';
import type { AnalyticsEvent } from './interactions.js';
import type { AnalyticsEventInput } from './schemas.js';

/** How far ahead of the server's clock an occurred_at may be (clients' clocks drift). */
export const FUTURE_SKEW_MS = 5 * 60_000;

/**
 * Checks what the schema cannot (conversions carry an amount and a currency, views and
 * clicks do not; amounts fit the currency; occurred_at is not in the future; the product
 * exists) and turns the events into what recordEvents stores. The first problem is a 422
 * naming the event's index and field (`events[3].amount`); nothing is stored then.
 */
export async function prepareEvents(
  db: Executor,
  input: AnalyticsEventInput[],
  options: { now: Date; batch: boolean },
): Promise<AnalyticsEvent[]> {
  const field = (i: number, name: string) => (options.batch ? `events[${i}].${name}` : name);
  const fail = (kind: 'missing_field' | 'invalid_field', i: number, name: string, reason: string) =>
    new AppError(kind, `${field(i, name)} ${reason}.`, { field: field(i, name), reason });
  const events: AnalyticsEvent[] = [];
  const latest = options.now.getTime() + FUTURE_SKEW_MS;
  input.forEach((e, i) => {
    const occurred = e.occurred_at === undefined ? options.now : new Date(e.occurred_at);
    if (occurred.getTime() > latest)
      throw fail('invalid_field', i, 'occurred_at', 'must not be in the future');
    if (occurred.getUTCFullYear() < 2000)
      throw fail('invalid_field', i, 'occurred_at', 'must be in the year 2000 or later');
    const event: AnalyticsEvent = {
      type: e.type,
      product_id: e.product_id,
      occurred_at: occurred,
      agent: e.agent ?? null,
      ...(e.id !== undefined ? { id: e.id } : {}),
    };
    if (e.type === 'conversion') {
      if (e.amount === undefined)
        throw fail('missing_field', i, 'amount', 'is required for a conversion');
      if (e.currency === undefined)
        throw fail('missing_field', i, 'currency', 'is required for a conversion');
      if (!isCurrency(e.currency))
        throw fail('invalid_field', i, 'currency', 'is not a known ISO 4217 currency');
      try {
        event.amount_minor = toMinorUnits(e.amount, e.currency);
      } catch (err) {
        if (err instanceof MoneyError) throw fail('invalid_field', i, 'amount', err.message);
        throw err;
      }
      event.currency = e.currency;
    } else {
      if (e.amount !== undefined)
        throw fail('invalid_field', i, 'amount', 'is only for conversions');
      if (e.currency !== undefined)
        throw fail('invalid_field', i, 'currency', 'is only for conversions');
    }
    events.push(event);
  });
  const ids = [...new Set(input.map((e) => e.product_id))];
  const known = await existingProductIds(db, ids);
  const unknown = input.findIndex((e) => !known.has(e.product_id));
  if (unknown >= 0) throw fail('invalid_field', unknown, 'product_id', 'names no product');
  return events;
}
