import { loadConfig } from '../config.js';
import { openStore } from '../db/store.js';
import { migrateToLatest } from '../db/migrate.js';
import {
  ApiKeyCreate,
  createApiKey,
  listApiKeys,
  revokeApiKey,
} from '../domain/access/api-keys.js';
import { AppError } from '../errors.js';
import { parseInput } from '../http/validate.js';
import { intFlag, parseVerbArgs, UsageError } from './args.js';

export const keysHelp = `Usage: agentshelf keys <create|list|revoke> [options]

Manage API keys. Keys are shown once, when created, and stored only as SHA-256 hashes.

  keys create --level read_only|read_write|admin [--name N] [--plan P]
              [--rpm N --burst N --monthly N] [--json]
      Prints the new key alone on stdout (with --json: the key record and the key).
  keys list [--json]
      Lists keys: id, level, plan, the limits in force, prefix and last 4 characters,
      created, last used, revoked (never the keys themselves).
  keys revoke ID [--json]
      Revokes a key at once.

Plans: starter, pro, enterprise, scale (default DEFAULT_PLAN). --rpm, --burst and --monthly
override the plan's per-minute, burst-per-minute and monthly limits for this key.`;

export async function runKeys(argv: string[]): Promise<number> {
  const { values, positionals } = parseVerbArgs(argv, {
    level: { type: 'string' },
    name: { type: 'string' },
    plan: { type: 'string' },
    rpm: { type: 'string' },
    burst: { type: 'string' },
    monthly: { type: 'string' },
  });
  const [sub, ...rest] = positionals;
  if (values.help || !sub) {
    console.log(keysHelp);
    return values.help ? 0 : 2;
  }
  const config = loadConfig();
  const store = openStore(config);
  try {
    await migrateToLatest(store.db);
    switch (sub) {
      case 'create': {
        if (!values.level)
          throw new UsageError('keys create needs --level read_only, read_write or admin');
        const input = parseInput(
          ApiKeyCreate,
          {
            level: values.level,
            name: values.name,
            plan: values.plan,
            rpm: intFlag(values.rpm, 'rpm', 1),
            burst: intFlag(values.burst, 'burst', 6),
            monthly: intFlag(values.monthly, 'monthly', 1),
          },
          'body',
        );
        const { key, secret } = await createApiKey(store.db, input, {
          environment: config.ENVIRONMENT,
          defaultPlan: config.DEFAULT_PLAN,
        });
        console.log(values.json ? JSON.stringify({ ...key, key: secret }) : secret);
        return 0;
      }
      case 'list': {
        const keys = await listApiKeys(store.db);
        if (values.json) {
          console.log(JSON.stringify(keys));
        } else {
          console.log(
            [
              'ID',
              'LEVEL',
              'PLAN',
              'LIMITS',
              'KEY',
              'CREATED',
              'LAST USED',
              'REVOKED',
              'NAME',
            ].join('\t'),
          );
          for (const k of keys) {
            console.log(
              [
                k.id,
                k.level,
                k.plan,
                `${k.limits.per_minute}/min, ${k.limits.burst_per_minute} burst/min, ${k.limits.monthly ?? 'unlimited'}/month`,
                `${k.prefix}...${k.last4}`,
                k.created_at,
                k.last_used_at ?? '-',
                k.revoked_at ?? '-',
                k.name ?? '',
              ].join('\t'),
            );
          }
        }
        return 0;
      }
      case 'revoke': {
        const id = rest[0];
        if (!id)
          throw new UsageError(
            'keys revoke needs the key id (key_...); see `agentshelf keys list`',
          );
        const key = await revokeApiKey(store.db, id);
        console.log(values.json ? JSON.stringify(key) : `revoked ${key.id} at ${key.revoked_at}`);
        return 0;
      }
      default:
        throw new UsageError(`unknown keys command '${sub}'; use create, list or revoke`);
    }
  } catch (err) {
    if (err instanceof AppError) {
      if (err.kind === 'not_found') {
        console.error(`error: ${err.message}`);
        return 1;
      }
      // Validation errors name a body field, which is the flag of the same name here.
      const flag = err.field ? `--${err.field} ` : '';
      console.error(`error: ${flag}${err.reason ?? err.message}`);
      return 2;
    }
    throw err;
  } finally {
    await store.close();
  }
}
