/**
 * What this process was built as: plain Node running build/ (from source), or the one-file
 * binary (a Node single executable application, `make dist`). Code that reads a file shipped
 * with agentshelf asks here, because inside the binary there are no such files: they are
 * assets of the executable.
 */
import sea from 'node:sea';

// Set by scripts/dist.mjs (esbuild `define`); undeclared when running from source.
declare const __AGENTSHELF_BUNDLE__: boolean | undefined;

/** True inside the one-file binary. */
export function inSea(): boolean {
  return sea.isSea();
}

/** True in the esbuild bundle (the binary, or dist/bundle/*.cjs run by node), false from build/. */
export function inBundle(): boolean {
  return typeof __AGENTSHELF_BUNDLE__ !== 'undefined' && __AGENTSHELF_BUNDLE__;
}

/** An asset's bytes, as the executable's own memory: read it, never write to it. */
export function seaRawAsset(name: string): Uint8Array {
  return new Uint8Array(sea.getRawAsset(name));
}

/** An asset as text. */
export function seaTextAsset(name: string): string {
  return sea.getAsset(name, 'utf8');
}
