import { markup, raw, type Html, type Interpolation } from '../markup.js';

/**
 * Text of unknown direction (a product or agent name, maybe Arabic or Hebrew): isolated with
 * <bdi> so it cannot reorder the cells and numbers around it.
 */
export function isolatedText(value: string): Html {
  return markup`<bdi>${value}</bdi>`;
}

/**
 * The report's style: screen and print. No web fonts, no images by URL: the file is read
 * offline, from an e-mail, and must make no request.
 */
const STYLE = `
:root { color-scheme: light; --ink: #1f2933; --muted: #616e7c; --rule: #d9dee3; }
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 1040px; padding: 24px; color: var(--ink);
  font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 17px; margin: 28px 0 8px; border-bottom: 1px solid var(--rule); padding-bottom: 4px; }
.meta { color: var(--muted); margin: 0 0 16px; }
table { border-collapse: collapse; width: 100%; margin: 8px 0 16px; }
th, td { text-align: left; padding: 4px 8px; border-bottom: 1px solid var(--rule); vertical-align: top; }
th { font-weight: 600; background: #f5f7fa; }
td { overflow-wrap: anywhere; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
td.num { white-space: nowrap; overflow-wrap: normal; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(180px, 1fr)); gap: 12px; }
.card { border: 1px solid var(--rule); border-radius: 6px; padding: 10px 12px; }
.card .label { color: var(--muted); font-size: 12px; }
.card .value { font-size: 20px; font-weight: 600; }
.card .trend { font-size: 12px; color: var(--muted); }
figure { margin: 8px 0 20px; }
figcaption { font-weight: 600; margin-bottom: 4px; }
svg.chart { width: 100%; height: auto; max-width: 1000px; display: block; }
.empty { color: var(--muted); font-style: italic; }
@media print {
  body { max-width: none; padding: 0; font-size: 11px; }
  h2 { break-after: avoid; }
  figure, .card, tr { break-inside: avoid; }
  thead { display: table-header-group; }
  th { background: none; }
  a { color: inherit; text-decoration: none; }
}
`;

/**
 * The start of a report document, up to the open <main>. The Content-Security-Policy meta
 * forbids scripts and every fetch (the file is meant to be opened anywhere, offline).
 */
export function htmlDocumentStart(title: string, subtitle: string): Html {
  return markup`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<meta name="referrer" content="no-referrer">
<title>${title}</title>
<style>${raw(STYLE)}</style>
</head>
<body>
<main>
<h1>${title}</h1>
<p class="meta">${subtitle}</p>
`;
}

export function htmlDocumentEnd(): Html {
  return raw('</main>\n</body>\n</html>\n');
}

export interface HtmlColumn<R> {
  label: string;
  numeric?: boolean;
  /** The cell: text (escaped when written) or markup (isolatedText, markup`...`). */
  cell: (row: R) => Interpolation;
}

export function htmlTableStart<R>(columns: readonly HtmlColumn<R>[]): Html {
  const head = columns.map(
    (c) => markup`<th${c.numeric ? raw(' class="num"') : ''} scope="col">${c.label}</th>`,
  );
  return markup`<table>
<thead><tr>${head}</tr></thead>
<tbody>
`;
}

export function htmlTableRows<R>(columns: readonly HtmlColumn<R>[], rows: readonly R[]): Html {
  // One string for the page of rows (a products report writes thousands): each cell is still
  // written by markup`...`, which escapes it.
  const opening = columns.map((c) => (c.numeric ? '<td class="num">' : '<td>'));
  let out = '';
  for (const row of rows) {
    out += '<tr>';
    for (let i = 0; i < columns.length; i++) {
      out += `${opening[i]!}${markup`${columns[i]!.cell(row)}`.value}</td>`;
    }
    out += '</tr>\n';
  }
  return raw(out);
}

export function htmlTableEnd(): Html {
  return raw('</tbody>\n</table>\n');
}

/** A whole table, or a line saying there is nothing to show. */
export function htmlTable<R>(
  columns: readonly HtmlColumn<R>[],
  rows: readonly R[],
  empty: string,
): Html {
  if (rows.length === 0)
    return markup`<p class="empty">${empty}</p>
`;
  return markup`${htmlTableStart(columns)}${htmlTableRows(columns, rows)}${htmlTableEnd()}`;
}
