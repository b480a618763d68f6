/**
 * The commands of the `agentshelf` CLI. The entry (src/main.ts) checks the Node.js version and
 * answers --help and --version, then loads this module for everything else.
 */
import { ConfigError, loadConfig, loadEnvFile } from '../config.js';
import { storeOpenFailure } from '../db/store.js';
import { UsageError } from './args.js';
import { analyticsHelp, runAnalytics } from './analytics.js';
import { buildHelp, runBuild } from './build.js';
import { feedsHelp, runFeeds } from './feeds.js';
import { integrationsHelp, runIntegrations } from './integrations.js';
import { keysHelp, runKeys } from './keys.js';
import { migrateHelp, runMigrate } from './migrate.js';
import { openapiHelp, runOpenapi } from './openapi.js';
import { publishHelp, runPublish } from './publish.js';
import { runSeed, seedHelp } from './seed.js';
import { runServe, serveHelp } from './serve.js';
import { runStore, storeHelp } from './store.js';
import { COMMAND_SUMMARIES, usage, type CommandName } from './usage.js';

interface Verb {
  help: string;
  run: (argv: string[]) => Promise<number>;
}

/** Every command of COMMAND_SUMMARIES (./usage.ts), and nothing else. */
const VERBS: Record<CommandName, Verb> = {
  serve: { help: serveHelp, run: runServe },
  migrate: { help: migrateHelp, run: runMigrate },
  build: { help: buildHelp, run: runBuild },
  publish: { help: publishHelp, run: runPublish },
  keys: { help: keysHelp, run: runKeys },
  seed: { help: seedHelp, run: runSeed },
  openapi: { help: openapiHelp, run: runOpenapi },
  analytics: { help: analyticsHelp, run: runAnalytics },
  feeds: { help: feedsHelp, run: runFeeds },
  integrations: { help: integrationsHelp, run: runIntegrations },
  store: { help: storeHelp, run: runStore },
};

const isCommand = (verb: string): verb is CommandName => Object.hasOwn(COMMAND_SUMMARIES, verb);

/** Runs one command; resolves its exit code. (--help and --version are the entry's.) */
export async function main(argv: string[]): Promise<number> {
  const [verb, ...rest] = argv;
  if (!verb || !isCommand(verb)) {
    console.error(`agentshelf: unknown command '${verb ?? ''}'\n\n${usage}`);
    return 2;
  }
  const command = VERBS[verb];
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
