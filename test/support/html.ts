/** Undoes src/markup.ts's escaping (the five characters it writes as entities, and `&`). */
export function unescapeHtml(s: string): string {
  return s
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&#96;/g, '`')
    .replace(/&amp;/g, '&');
}

/**
 * The rows of the first table on a page (after the first `after` in it, when given), as the
 * text of their cells: tags dropped, spaces collapsed, entities left as written.
 */
export function tableRows(page: string, after = ''): string[][] {
  const from = after ? page.indexOf(after) : 0;
  const body = /<tbody>([\s\S]*?)<\/tbody>/.exec(page.slice(Math.max(0, from)))?.[1] ?? '';
  return [...body.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((row) =>
    [...row[1]!.matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map((cell) =>
      cell[1]!
        .replace(/<[^>]+>/g, ' ')
        .replace(/\s+/g, ' ')
        .trim(),
    ),
  );
}

/**
 * The fields of the first form on a page posting to `action`, as a browser sends them when
 * nothing is changed: inputs, textareas and the selected option of each select.
 */
export function formValues(page: string, action: string): Record<string, string> {
  const start = page.indexOf(`action="${action}"`);
  if (start < 0) throw new Error(`no form posting to ${action} on the page`);
  const form = page.slice(start, page.indexOf('</form>', start));
  const values: Record<string, string> = {};
  for (const m of form.matchAll(/<input\b([^>]*)>/g)) {
    const name = /\bname="([^"]*)"/.exec(m[1]!)?.[1];
    if (name) values[name] = unescapeHtml(/\bvalue="([^"]*)"/.exec(m[1]!)?.[1] ?? '');
  }
  for (const m of form.matchAll(/<textarea\b[^>]*name="([^"]*)"[^>]*>\n?([\s\S]*?)<\/textarea>/g)) {
    values[m[1]!] = unescapeHtml(m[2]!);
  }
  for (const m of form.matchAll(/<select\b[^>]*name="([^"]*)"[^>]*>([\s\S]*?)<\/select>/g)) {
    values[m[1]!] = unescapeHtml(/<option selected value="([^"]*)"/.exec(m[2]!)?.[1] ?? '');
  }
  return values;
}
