/**
 * The one way agentshelf writes HTML (the dashboard, the HTML reports and their SVG charts,
 * the discovery registry's pages): a tagged template that escapes every interpolated value
 * unless it is already `Html` (made by this tag, by `join`, by `jsonForScript`, or by `raw`
 * for markup we built ourselves). Arrays are joined, null/undefined/false write nothing.
 * Named `markup`, not `html`, so prettier leaves the templates' text as written. Nothing
 * else in the tree escapes HTML (test/lint/one-escaper.test.ts holds that).
 */
export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
  '`': '&#96;',
};

const SPECIAL = /[&<>"'`]/;
const SPECIALS = /[&<>"'`]/g;

/** Text as HTML element content or a quoted attribute value (SVG too). */
export function escapeHtml(text: string): string {
  // Most text has nothing to escape: a test is cheaper than a replace that finds nothing.
  return SPECIAL.test(text) ? text.replace(SPECIALS, (c) => ESCAPES[c]!) : text;
}

export type Interpolation = Html | string | number | boolean | null | undefined | Interpolation[];

function render(value: Interpolation): string {
  if (typeof value === 'string') return escapeHtml(value);
  if (value instanceof Html) return value.value;
  if (typeof value === 'number') return String(value);
  if (value === null || value === undefined || value === false) return '';
  if (Array.isArray(value)) {
    let out = '';
    for (const v of value) out += render(v);
    return out;
  }
  return String(value);
}

export function markup(strings: TemplateStringsArray, ...values: Interpolation[]): Html {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += render(values[i]!) + strings[i + 1]!;
  return new Html(out);
}

/** Values (escaped unless Html) joined with a separator of markup (`'\n'`, `' · '`). */
export function join(values: readonly Interpolation[], separator: string): Html {
  return new Html(values.map(render).join(separator));
}

/**
 * A value as JSON for a `<script type="application/ld+json">` block. `<`, `>` and `&` are
 * written as \u escapes (still the same JSON string values), so neither `</script>` nor
 * `<!--` can end or change the block; U+2028/2029 are escaped for old JavaScript parsers.
 */
export function jsonForScript(value: unknown): Html {
  return new Html(
    JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => {
      return `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
    }),
  );
}

/** Markup we made ourselves (a stylesheet, the SVG charts); never for anything a user typed. */
export function raw(markup: string): Html {
  return new Html(markup);
}
