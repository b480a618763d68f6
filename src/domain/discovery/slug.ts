import { createHash } from 'node:crypto';

/** What a slug looks like: lower-case ASCII words joined by `-`. */
export const SLUG_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

const MAX_SLUG_BASE = 60;

/**
 * A brand's URL identifier (CONTRACT part 2): lower-case ASCII, words joined by `-`.
 * Accents are folded (`Café` -> `cafe`), `&` reads as `and`, everything else that is not a
 * letter or digit separates words. A name with no ASCII letter or digit at all (`東京`) gets
 * `brand-` and a short hash of the name, so it still has a stable, readable slug.
 */
export function slugify(name: string): string {
  const words = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/&/g, ' and ')
    .replace(/['\u2019]/g, '')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
  let base = '';
  for (const word of words) {
    const next = base ? `${base}-${word}` : word;
    if (next.length > MAX_SLUG_BASE) break;
    base = next;
  }
  if (!base && words.length) base = words[0]!.slice(0, MAX_SLUG_BASE);
  return base || `brand-${createHash('sha256').update(name).digest('hex').slice(0, 8)}`;
}

/**
 * Decides slugs for brands that have none yet, given every slug already taken (slugs are
 * never reused, so a brand's URL keeps meaning that brand). New names are taken in code-unit
 * order so one run decides the same way whatever order the store returned them in; a name
 * whose slug is taken gets the first free `-2`, `-3`, ... suffix.
 */
export function assignSlugs(
  newNames: Iterable<string>,
  taken: Iterable<string>,
): Map<string, string> {
  const used = new Set(taken);
  const assigned = new Map<string, string>();
  for (const name of [...new Set(newNames)].sort()) {
    const base = slugify(name);
    let slug = base;
    for (let n = 2; used.has(slug); n++) slug = `${base}-${n}`;
    used.add(slug);
    assigned.set(name, slug);
  }
  return assigned;
}
