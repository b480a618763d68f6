/**
 * True when JSON text nests deeper than `max` arrays and objects (JSON.parse is not asked to
 * build such a value: 100,000 levels cost it a quarter of a second, more cost seconds). Strings are skipped over.
 */
export function jsonNestsDeeperThan(text: string, max: number): boolean {
  // The depth cannot pass the number of '{' and '[' in the text (those in strings counted
  // too): a record has a few, which indexOf finds far faster than a look at every character.
  let opens = 0;
  for (let at = text.indexOf('{'); at >= 0 && opens <= max; at = text.indexOf('{', at + 1)) opens++;
  for (let at = text.indexOf('['); at >= 0 && opens <= max; at = text.indexOf('[', at + 1)) opens++;
  if (opens <= max) return false;
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // Skip the string: to the next quote not escaped.
      for (i++; i < text.length; i++) {
        const d = text.charCodeAt(i);
        if (d === 0x5c) i++;
        else if (d === 0x22) break;
      }
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}
