/**
 * What text agentshelf accepts (CONTRACT part 6): any well-formed Unicode except U+0000.
 * PostgreSQL cannot hold U+0000 in text or jsonb, and neither store can hold a lone surrogate
 * as UTF-8, so the same input would get different answers on the two stores. Text is checked
 * where it enters (HTTP paths, queries and bodies, the dashboard's forms, sync items, imported
 * log lines, analytics recorded from requests); nothing that fails here is ever stored.
 *
 * One module at the root (like ids.ts and errors.ts) so that every layer uses the same rule.
 */

/** Why a string is refused, in a few words; undefined when it is acceptable. */
export function textProblem(value: string): string | undefined {
  if (value.includes('\u0000')) return 'must not contain NUL characters';
  if (!value.isWellFormed()) return 'must be valid Unicode (it has a lone surrogate)';
  return undefined;
}

/** True when the store can hold the string as it is. */
export function isAcceptableText(value: string): boolean {
  return !value.includes('\u0000') && value.isWellFormed();
}

/**
 * Shows a string that may hold refused characters: U+0000 and lone surrogates as `\u0000`
 * escapes (six plain characters), so a field name quoted in an error or a log line is itself
 * acceptable text and shows the reader where the problem is.
 */
export function showText(value: string): string {
  if (isAcceptableText(value)) return value;
  let out = '';
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    const high = c >= 0xd800 && c <= 0xdbff;
    const next = i + 1 < value.length ? value.charCodeAt(i + 1) : 0;
    if (high && next >= 0xdc00 && next <= 0xdfff) {
      out += value[i]! + value[i + 1]!;
      i++;
    } else if (c === 0 || (c >= 0xd800 && c <= 0xdfff)) {
      out += `\\u${c.toString(16).padStart(4, '0')}`;
    } else {
      out += value[i]!;
    }
  }
  return out;
}

/** A refused string found in a value: where it is (a field path) and why. */
export interface TextFault {
  /** The dotted path of the field (`attributes.color`, `items[2].name`); '' for the value itself. */
  field: string;
  reason: string;
}

function join(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}

/**
 * Looks through a parsed JSON value (strings, arrays, objects: keys and values, at any depth)
 * for the first string that is not acceptable. A key that holds the refused character is
 * named itself (`attributes.col\u0000or`); a value is named by its key (`attributes.color`).
 */
export function findTextFault(value: unknown, path = ''): TextFault | undefined {
  // An explicit stack, not recursion: a body may nest deeply (the parser limits its size).
  const stack: Array<[unknown, string]> = [[value, path]];
  while (stack.length > 0) {
    const [v, at] = stack.pop()!;
    if (typeof v === 'string') {
      const reason = textProblem(v);
      if (reason) return { field: at, reason };
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], `${at}[${i}]`]);
    } else if (v !== null && typeof v === 'object') {
      const entries = Object.entries(v as Record<string, unknown>);
      for (const [key] of entries) {
        const reason = textProblem(key);
        if (reason) return { field: showText(join(at, key)), reason: `name ${reason}` };
      }
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, item] = entries[i]!;
        stack.push([item, join(at, key)]);
      }
    }
  }
  return undefined;
}

/**
 * For text recorded from what clients send (analytics of requests: a path, a user agent),
 * where refusing would lose the count: the first `max` UTF-16 units, with U+0000 and lone
 * surrogates (also one left by the cut) replaced by U+FFFD.
 */
export function keptText(value: string, max = Infinity): string {
  const cut = value.length > max ? value.slice(0, max) : value;
  if (isAcceptableText(cut)) return cut;
  return cut.toWellFormed().replaceAll('\u0000', '\uFFFD');
}
