import { z } from 'zod';
import { PLAN_NAMES, type PlanName } from '../../config.js';
import type { ApiKeyRow } from '../../db/schema.js';

export interface Plan {
  /** Requests in a calendar month (UTC); null is unlimited. */
  monthly: number | null;
  perMinute: number;
  /** "Burst per minute" of SPEC part 8: the pace allowed over 10 seconds, times 6. */
  burstPerMinute: number;
}

/** SPEC part 8. */
export const PLANS: Record<PlanName, Plan> = {
  starter: { monthly: 10_000, perMinute: 100, burstPerMinute: 200 },
  pro: { monthly: 100_000, perMinute: 1_000, burstPerMinute: 2_000 },
  enterprise: { monthly: 1_000_000, perMinute: 10_000, burstPerMinute: 20_000 },
  scale: { monthly: null, perMinute: 100_000, burstPerMinute: 200_000 },
};

export const BURST_WINDOW_MS = 10_000;
export const MINUTE_WINDOW_MS = 60_000;

/** The limits that apply to one key: its plan, with the key's own overrides on top. */
export interface KeyLimits {
  plan: PlanName;
  perMinute: number;
  burstPerMinute: number;
  /** Requests allowed in each 10-second burst window: floor(burst per minute / 6). */
  burst: number;
  monthly: number | null;
}

export const KeyLimitsView = z.object({
  per_minute: z.int(),
  burst_per_minute: z.int(),
  burst_per_10_seconds: z.int(),
  monthly: z.int().nullable(),
});
export type KeyLimitsView = z.infer<typeof KeyLimitsView>;

function isPlanName(name: string): name is PlanName {
  return (PLAN_NAMES as readonly string[]).includes(name);
}

// A key's row is read once and kept by the key cache, so its limits are worked out once too.
const limitsOfRow = new WeakMap<object, KeyLimits>();

/**
 * The limits of a key. A plan name the store holds but this build does not know (a row
 * edited by hand) gets the smallest plan's limits rather than none.
 */
export function limitsOfKey(key: Pick<ApiKeyRow, 'plan' | 'rpm' | 'burst' | 'monthly'>): KeyLimits {
  let limits = limitsOfRow.get(key);
  if (!limits) {
    limits = computeLimits(key);
    limitsOfRow.set(key, limits);
  }
  return limits;
}

function computeLimits(key: Pick<ApiKeyRow, 'plan' | 'rpm' | 'burst' | 'monthly'>): KeyLimits {
  const plan = isPlanName(key.plan) ? key.plan : 'starter';
  const base = PLANS[plan];
  const burstPerMinute = key.burst ?? base.burstPerMinute;
  return {
    plan,
    perMinute: key.rpm ?? base.perMinute,
    burstPerMinute,
    burst: Math.max(1, Math.floor(burstPerMinute / 6)),
    monthly: key.monthly ?? base.monthly,
  };
}

export function presentKeyLimits(limits: KeyLimits): KeyLimitsView {
  return {
    per_minute: limits.perMinute,
    burst_per_minute: limits.burstPerMinute,
    burst_per_10_seconds: limits.burst,
    monthly: limits.monthly,
  };
}
