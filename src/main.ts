#!/usr/bin/env node
/**
 * The `agentshelf` command (package.json `bin`; scripts/dist.mjs bundles it as the one-file
 * binary's entry). A small entry on purpose: ES module imports are hoisted, so the commands,
 * and the store's native addon behind them, load only after this checks the Node.js version
 * (on Node 20 the addon crashes the process without a message). --help and --version answer
 * on any Node; every command is refused, with what to do, on one older than `engines`.
 */
import module from 'node:module';
import { isHelpFlag, isVersionFlag, usage, versionLine } from './cli/usage.js';
import { nodeVersionRefusal } from './runtime/node-version.js';

const argv = process.argv.slice(2);
const [verb] = argv;
const refusal = nodeVersionRefusal();

if (isVersionFlag(verb)) {
  console.log(versionLine());
  if (refusal) console.error(refusal);
} else if (isHelpFlag(verb)) {
  console.log(usage);
  if (refusal) console.error(refusal);
  process.exitCode = verb ? 0 : 2;
} else if (refusal) {
  console.error(refusal);
  process.exitCode = 1;
} else {
  // Node's on-disk cache of compiled modules (in the OS temporary directory, or where
  // NODE_COMPILE_CACHE says; NODE_DISABLE_COMPILE_CACHE=1 turns it off): a command after the
  // first compiles less (`openapi`: about 11% less CPU; the test suite starts hundreds).
  module.enableCompileCache?.();
  import('./cli/main.js')
    .then(({ main }) => main(argv))
    .then(
      (code) => {
        process.exitCode = code;
      },
      (err: unknown) => {
        console.error(
          `agentshelf: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`,
        );
        process.exitCode = 1;
      },
    );
}
