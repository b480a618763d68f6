import { invalidField } from '../../errors.js';
import { checkTarget, TargetRefusedError } from '../../net/target-guard.js';
import type { Platform } from './schemas.js';

/** Where a platform's requests go: the URLs the SSRF guard checks. */
export function targetsOf(
  platform: Platform,
  shopDomain: string,
  settings: Record<string, unknown>,
): { field: string; url: string }[] {
  const targets: { field: string; url: string }[] = [];
  if (platform !== 'feed') targets.push({ field: 'shop_domain', url: `https://${shopDomain}/` });
  for (const key of ['url', 'base_url', 'api_url']) {
    if (typeof settings[key] === 'string')
      targets.push({ field: `settings.${key}`, url: settings[key] });
  }
  return targets;
}

/** The SSRF guard over an integration's targets; a refusal names the field. */
export async function guardTargets(
  targets: { field: string; url: string }[],
  allowPrivate: boolean,
): Promise<void> {
  for (const target of targets) {
    try {
      await checkTarget(target.url, { allowPrivate });
    } catch (err) {
      if (err instanceof TargetRefusedError)
        throw invalidField(target.field, `is refused: ${err.reason}`);
      throw err;
    }
  }
}
