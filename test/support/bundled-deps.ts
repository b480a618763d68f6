/**
 * Loads Kysely and zod, for the project's own modules, from one-file bundles of themselves
 * (build/.bundled-deps/, written by run-tests.ts with esbuild from node_modules, the versions
 * the lockfile installed), instead of from their hundreds of files: Kysely's entry alone is 255
 * modules, which every test process, every CLI child and every audit writer thread compiled and
 * linked again, 0.25 s of CPU each (`make test` starts well over a thousand of them). Their code
 * is the same; only its packaging differs, as in the one-file binary (scripts/dist.mjs), and no
 * module of ours changes. The suite's CPU time fell by a quarter.
 *
 * run-tests.ts registers this with `--import` in NODE_OPTIONS, so the processes and threads the
 * tests start load it too. Only imports from the checkout's build/ are redirected: a package
 * that brings its own copy (the MCP SDK's zod) keeps it, and so does another checkout (the clone
 * test's). `npx tap` on one file runs without it, on node_modules as installed. On a Node
 * without module.registerHooks (the node-version test's Node 20) it does nothing.
 */
import module from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

/** The bare specifiers bundled, each to the file run-tests.ts writes for it. */
export const BUNDLED_DEPS: Record<string, string> = {
  kysely: 'kysely.js',
  'kysely/migration': 'kysely-migration.js',
  zod: 'zod.js',
};

const BUILD = path.resolve(import.meta.dirname, '..', '..');
const BUNDLES = path.join(BUILD, '.bundled-deps');
const buildUrl = pathToFileURL(BUILD).href + '/';
const urls = new Map(
  Object.entries(BUNDLED_DEPS).map(([spec, file]) => [
    spec,
    pathToFileURL(path.join(BUNDLES, file)).href,
  ]),
);

module.registerHooks?.({
  resolve(specifier, context, nextResolve) {
    const url = urls.get(specifier);
    if (url && context.parentURL?.startsWith(buildUrl))
      return { url, format: 'module', shortCircuit: true };
    return nextResolve(specifier, context);
  },
});
