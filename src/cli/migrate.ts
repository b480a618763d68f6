import { loadConfig } from '../config.js';
import { describeLocation, openStore } from '../db/store.js';
import { migrateToLatest } from '../db/migrate.js';
import { parseVerbArgs } from './args.js';

export const migrateHelp = `Usage: agentshelf migrate [--json]

Brings the store (DATA_DIR/agentshelf.sqlite, or the PostgreSQL database of DATABASE_URL)
to the latest schema. Safe to run again: migrations already applied are skipped. serve also
migrates at start.`;

export async function runMigrate(argv: string[]): Promise<number> {
  const { values } = parseVerbArgs(argv, {});
  if (values.help) {
    console.log(migrateHelp);
    return 0;
  }
  const config = loadConfig();
  const store = openStore(config);
  try {
    const results = await migrateToLatest(store.db);
    const applied = results.filter((r) => r.status === 'Success').map((r) => r.migrationName);
    if (values.json)
      console.log(JSON.stringify({ store: describeLocation(store.location), applied }));
    else
      console.log(
        applied.length
          ? `applied ${applied.join(', ')} to ${describeLocation(store.location)}`
          : `${describeLocation(store.location)} is up to date`,
      );
    return 0;
  } finally {
    await store.close();
  }
}
