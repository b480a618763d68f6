/**
 * The oldest Node.js agentshelf runs on, and the refusal every entry point prints on an older
 * one. On Node 20, better-sqlite3's addon (built for Node 24+) crashes the process with a
 * segmentation fault and no message the first time a store is opened: so the entry points
 * check first, before anything opens a store. This module imports nothing, so checking costs
 * nothing at start. test/cli/node-version.test.ts keeps NODE_MAJOR_REQUIRED equal to
 * package.json's `engines.node`.
 */

/** package.json `engines.node` is `>=NODE_MAJOR_REQUIRED`. */
export const NODE_MAJOR_REQUIRED = 24;

/**
 * What to tell a user running `version` (a `process.version` such as `v20.20.2`), or
 * undefined when that Node is supported.
 */
export function nodeVersionRefusal(version: string = process.version): string | undefined {
  const major = Number(/^v?(\d+)\./.exec(version)?.[1]);
  if (major >= NODE_MAJOR_REQUIRED) return undefined;
  return (
    `agentshelf needs Node.js ${NODE_MAJOR_REQUIRED} or later; this is ${version}. ` +
    `Install Node.js ${NODE_MAJOR_REQUIRED}+ or, from a checkout, run \`make run\`, which fetches one (scripts/node.sh).`
  );
}
