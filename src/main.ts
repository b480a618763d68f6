#!/usr/bin/env node
import { ConfigError, loadConfig, loadEnvFile } from './config.js';
import { storeOpenFailure } from './db/store.js';
import { UsageError } from './cli/args.js';
import { analyticsHelp, runAnalytics } from './cli/analytics.js';
import { buildHelp, runBuild } from './cli/build.js';
import { integrationsHelp, runIntegrations } from './cli/integrations.js';
import { keysHelp, runKeys } from './cli/keys.js';
import { migrateHelp, runMigrate } from './cli/migrate.js';
import { openapiHelp, runOpenapi } from './cli/openapi.js';
import { runSeed, seedHelp } from './cli/seed.js';
import { runServe, serveHelp } from './cli/serve.js';
import { runStore, storeHelp } from './cli/store.js';
import { VERSION } from './version.js';

interface Verb {
  summary: string;
  help: string;
  run: (argv: string[]) => Promise<number>;
}

const VERBS: Record<string, Verb> = {
  serve: { summary: 'serve the platform API', help: serveHelp, run: runServe },
  migrate: { summary: 'bring the store to the latest schema', help: migrateHelp, run: runMigrate },
  build: {
    summary: 'run the pipeline once (feeds), exit non-zero when a feed fails',
    help: buildHelp,
    run: runBuild,
  },
  keys: { summary: 'create, list and revoke API keys', help: keysHelp, run: runKeys },
  seed: {
    summary: 'write the demo catalogue or N synthetic products',
    help: seedHelp,
    run: runSeed,
  },
  openapi: { summary: 'print the OpenAPI document', help: openapiHelp, run: runOpenapi },
  analytics: {
    summary: 'import CDN access logs; list who counts as an AI agent',
    help: analyticsHelp,
    run: runAnalytics,
  },
  integrations: {
    summary: 'list and sync integrations, rotate the credentials key',
    help: integrationsHelp,
    run: runIntegrations,
  },
  store: {
    summary: 'copy the store to PostgreSQL or SQLite (store copy --to URL)',
    help: storeHelp,
    run: runStore,
  },
};

const usage = `agentshelf ${VERSION}: put a product catalogue in front of AI shopping agents.

Usage: agentshelf <command> [options]

Commands:
${Object.entries(VERBS)
  .map(([name, verb]) => `  ${name.padEnd(10)}${verb.summary}`)
  .join('\n')}

Every command takes --help. Settings come from environment variables, and from a .env file\nin the working directory for those not set (docs/configuration.md).`;

async function main(argv: string[]): Promise<number> {
  const [verb, ...rest] = argv;
  if (!verb || verb === '--help' || verb === '-h' || verb === 'help') {
    console.log(usage);
    return verb ? 0 : 2;
  }
  if (verb === '--version' || verb === '-v') {
    console.log(`agentshelf ${VERSION} (Node.js ${process.version})`);
    return 0;
  }
  const command = VERBS[verb];
  if (!command) {
    console.error(`agentshelf: unknown command '${verb}'\n\n${usage}`);
    return 2;
  }
  try {
    // Every command reads the same settings: the environment, then ./.env for what it lacks.
    loadEnvFile();
    return await command.run(rest);
  } catch (err) {
    if (err instanceof UsageError) {
      console.error(`agentshelf ${verb}: ${err.message}\n\n${command.help}`);
      return 2;
    }
    if (err instanceof ConfigError) {
      console.error(`agentshelf: configuration error: ${err.message}`);
      return 2;
    }
    // PostgreSQL down or refusing us: one line naming host:port, not a stack.
    const failure = storeOpenFailure(loadConfig(), err);
    if (failure) {
      console.error(`agentshelf ${verb}: ${failure}`);
      return 1;
    }
    throw err;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    console.error(`agentshelf: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.exitCode = 1;
  },
);
