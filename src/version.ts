import { readFileSync } from 'node:fs';

// Inlined by scripts/dist.mjs (esbuild `define`): the binary has no package.json beside it.
declare const __AGENTSHELF_VERSION__: string | undefined;

/** The package version, as in package.json. */
export const VERSION: string =
  typeof __AGENTSHELF_VERSION__ === 'string'
    ? __AGENTSHELF_VERSION__
    : (
        JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
          version: string;
        }
      ).version;
