/**
 * The top-level usage and version lines. Light on purpose (it imports only the version): the
 * entry (src/main.ts) prints them without loading the commands, on any Node.
 */
import { VERSION } from '../version.js';

/** Every command, with its one-line summary, in the order the usage lists them. */
export const COMMAND_SUMMARIES = {
  serve: 'serve the platform API',
  migrate: 'bring the store to the latest schema',
  build: 'run the pipeline once (feeds), exit non-zero when a feed fails',
  publish: 'upload the published registry to PUBLISH_TARGET (changed objects only)',
  keys: 'create, list and revoke API keys',
  seed: 'write the demo catalogue or N synthetic products',
  openapi: 'print the OpenAPI document',
  analytics: 'import CDN access logs; list who counts as an AI agent',
  feeds: "preview a feed's next generation through its channel profile",
  integrations: 'list and sync integrations, rotate the credentials key',
  store: 'copy the store to PostgreSQL or SQLite (store copy --to URL)',
} as const;

export type CommandName = keyof typeof COMMAND_SUMMARIES;

/** The summaries' column: two spaces past the longest command name. */
const COLUMN = Math.max(...Object.keys(COMMAND_SUMMARIES).map((name) => name.length)) + 2;

export const usage = `agentshelf ${VERSION}: put a product catalogue in front of AI shopping agents.

Usage: agentshelf <command> [options]

Commands:
${Object.entries(COMMAND_SUMMARIES)
  .map(([name, summary]) => `  ${name.padEnd(COLUMN)}${summary}`)
  .join('\n')}

Every command takes --help. Settings come from environment variables, and from a .env file\nin the working directory for those not set (docs/configuration.md).`;

/** What `agentshelf --version` prints. */
export function versionLine(): string {
  return `agentshelf ${VERSION} (Node.js ${process.version})`;
}

export const isHelpFlag = (arg: string | undefined): boolean =>
  !arg || arg === '--help' || arg === '-h' || arg === 'help';
export const isVersionFlag = (arg: string | undefined): boolean =>
  arg === '--version' || arg === '-v';
