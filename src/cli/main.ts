/**
 * The commands of the `agentshelf` CLI. The entry (src/main.ts) checks the Node.js version and
 * answers --help and --version, then loads this module for everything else.
 */
import { ConfigError, loadConfig, loadEnvFile } from '../config.js';
import { storeOpenFailure } from '../db/store.js';
import { UsageError } from './args.js';
import { COMMAND_SUMMARIES, usage, type CommandName } from './usage.js';

interface Verb {
  help: string;
  run: (argv: string[]) => Promise<number>;
}

/**
 * Every command of COMMAND_SUMMARIES (./usage.ts), and nothing else, each loaded when it runs:
 * a command loads its own modules, not every other command's (`keys create` does not load the
 * servers, the dashboard and the pipeline: about half the CPU of a CLI child, which the test
 * suite starts hundreds of).
 */
const VERBS: Record<CommandName, () => Promise<Verb>> = {
  serve: async () => {
    const m = await import('./serve.js');
    return { help: m.serveHelp, run: m.runServe };
  },
  migrate: async () => {
    const m = await import('./migrate.js');
    return { help: m.migrateHelp, run: m.runMigrate };
  },
  build: async () => {
    const m = await import('./build.js');
    return { help: m.buildHelp, run: m.runBuild };
  },
  publish: async () => {
    const m = await import('./publish.js');
    return { help: m.publishHelp, run: m.runPublish };
  },
  keys: async () => {
    const m = await import('./keys.js');
    return { help: m.keysHelp, run: m.runKeys };
  },
  seed: async () => {
    const m = await import('./seed.js');
    return { help: m.seedHelp, run: m.runSeed };
  },
  openapi: async () => {
    const m = await import('./openapi.js');
    return { help: m.openapiHelp, run: m.runOpenapi };
  },
  analytics: async () => {
    const m = await import('./analytics.js');
    return { help: m.analyticsHelp, run: m.runAnalytics };
  },
  feeds: async () => {
    const m = await import('./feeds.js');
    return { help: m.feedsHelp, run: m.runFeeds };
  },
  integrations: async () => {
    const m = await import('./integrations.js');
    return { help: m.integrationsHelp, run: m.runIntegrations };
  },
  store: async () => {
    const m = await import('./store.js');
    return { help: m.storeHelp, run: m.runStore };
  },
};

const isCommand = (verb: string): verb is CommandName => Object.hasOwn(COMMAND_SUMMARIES, verb);

/** Runs one command; resolves its exit code. (--help and --version are the entry's.) */
export async function main(argv: string[]): Promise<number> {
  const [verb, ...rest] = argv;
  if (!verb || !isCommand(verb)) {
    console.error(`agentshelf: unknown command '${verb ?? ''}'\n\n${usage}`);
    return 2;
  }
  const command = await VERBS[verb]();
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
