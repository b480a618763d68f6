import type { KeyLevel } from '../db/schema.js';
import { markup, type Html, type Interpolation } from '../markup.js';
import { SCRIPT_PATH, STYLESHEET_PATH } from './assets.js';
import { FAVICON_PATH } from './favicon.js';
import type { Formatter } from './format.js';

export interface Viewer {
  keyId: string;
  level: KeyLevel;
  name: string | null;
  csrf: string;
}

const NAV: [string, string][] = [
  ['/dashboard/products', 'Products'],
  ['/dashboard/feeds', 'Feeds'],
  ['/dashboard/integrations', 'Integrations'],
  ['/dashboard/webhooks', 'Webhooks'],
  ['/dashboard/analytics', 'Analytics'],
  ['/dashboard/discovery', 'Discovery'],
  ['/dashboard/settings/api-keys', 'API keys'],
];

export function page(options: {
  title: string;
  viewer?: Viewer;
  current?: string;
  body: Interpolation;
  storeName: string;
  /** Reload every so many seconds (a sync under way): a meta refresh, no script. */
  refreshSeconds?: number | undefined;
}): Html {
  const { viewer } = options;
  return markup`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        ${options.refreshSeconds ? markup`<meta http-equiv="refresh" content="${options.refreshSeconds}" />` : ''}
        <title>${options.title} · ${options.storeName} · agentshelf</title>
        <link rel="icon" href="${FAVICON_PATH}" sizes="16x16" />
        <link rel="stylesheet" href="${STYLESHEET_PATH}" />
        <script src="${SCRIPT_PATH}" defer></script>
      </head>
      <body>
        <a class="skip" href="#content">Skip to content</a>
        <header class="top">
          <a class="brand" href="/dashboard">${options.storeName}</a>
          ${
            viewer
              ? markup`<nav class="main" aria-label="Main">
                    ${NAV.map(
                      ([href, label]) =>
                        markup`<a
                          href="${href}"
                          ${options.current === href ? markup` aria-current="page"` : ''}
                          >${label}</a
                        >`,
                    )}
                  </nav>
                  <form class="inline" method="post" action="/dashboard/sign-out">
                    <input type="hidden" name="csrf" value="${viewer.csrf}" /><span class="muted"
                      >${viewer.level}</span
                    >
                    <button class="secondary" type="submit">Sign out</button>
                  </form>`
              : ''
          }
        </header>
        <main id="content">
          <h1>${options.title}</h1>
          ${options.body}
        </main>
      </body>
    </html> `;
}

/** A hidden CSRF field for a form. */
export function csrfField(viewer: Viewer): Html {
  return markup`<input type="hidden" name="csrf" value="${viewer.csrf}" />`;
}

/** A labelled field with its error beside it. */
export function field(options: {
  name: string;
  /** The control's id when a page has two fields of one name (default f-<name>). */
  id?: string;
  label: string;
  value?: string | undefined;
  error?: string | undefined;
  type?: string;
  required?: boolean;
  hint?: string;
  textarea?: boolean;
  options?: readonly string[];
  /** What the empty option reads as (default "(any)"). */
  emptyLabel?: string;
  /** What an option reads as, when not its value. */
  labels?: Readonly<Record<string, string>>;
}): Html {
  const id = options.id ?? `f-${options.name.replace(/[^a-z0-9_-]/gi, '-')}`;
  const errId = `${id}-error`;
  const invalid = options.error ? markup` aria-invalid="true" aria-describedby="${errId}"` : '';
  const req = options.required ? markup` required` : '';
  let control: Html;
  if (options.options) {
    control = markup`<select id="${id}" name="${options.name}" ${invalid}>
      ${options.options.map(
        (o) =>
          markup`<option${o === (options.value ?? '') ? markup` selected` : ''} value="${o}">${options.labels?.[o] ?? (o || (options.emptyLabel ?? '(any)'))}</option>`,
      )}
    </select>`;
  } else if (options.textarea) {
    control = markup`<textarea id="${id}" name="${options.name}" ${invalid}${req}>
${options.value ?? ''}</textarea>`;
  } else {
    control = markup`<input
      id="${id}"
      name="${options.name}"
      type="${options.type ?? 'text'}"
      value="${options.value ?? ''}"
      ${invalid}${req}
    />`;
  }
  return markup`<div class="field">
    <label for="${id}">${options.label}</label>${control}${
      options.hint ? markup`<div class="muted">${options.hint}</div>` : ''
    }${options.error ? markup`<p class="field-error" id="${errId}">${options.error}</p>` : ''}
  </div>`;
}

/**
 * The links under a paged list: "11–20 of 45", Previous and Next. `link(offset)` writes a
 * page's address (keeping the list's filters); `count` formats the numbers for the reader.
 */
export function pager(options: {
  offset: number;
  shown: number;
  total: number;
  pageSize: number;
  hasMore: boolean;
  link: (offset: number) => string;
  count: (n: number) => string;
}): Html {
  const { offset, shown, total, pageSize, hasMore, link, count } = options;
  return markup`<div class="pager">
    <span>${shown === 0 ? '' : `${count(offset + 1)}–${count(offset + shown)} of ${count(total)}`}</span>
    ${offset > 0 ? markup`<a href="${link(Math.max(0, offset - pageSize))}">Previous</a>` : ''}
    ${hasMore ? markup`<a href="${link(offset + pageSize)}">Next</a>` : ''}
  </div>`;
}

/**
 * A list's address at `offset`, keeping its other parameters (no offset for the first page);
 * `offsetName` for a list that shares its page with another.
 */
export function pageLink(
  path: string,
  query: Readonly<Record<string, string>>,
  offset: number,
  hash = '',
  offsetName = 'offset',
): string {
  const params = new URLSearchParams(query);
  params.delete(offsetName);
  if (offset > 0) params.set(offsetName, String(offset));
  const text = params.toString();
  return `${path}${text ? `?${text}` : ''}${hash}`;
}

/** The pager under a page of an API list answer (its `pagination`), counts in the reader's locale. */
export function listPager(
  page: { offset: number; total: number; has_more: boolean },
  options: { shown: number; pageSize: number; link: (offset: number) => string; fmt: Formatter },
): Html {
  const { shown, pageSize, link, fmt } = options;
  return pager({
    offset: page.offset,
    shown,
    total: page.total,
    pageSize,
    hasMore: page.has_more,
    link,
    count: (n) => fmt.number(n),
  });
}

export function table(headers: string[], rows: Interpolation[][]): Html {
  return markup`<div class="scroll" tabindex="0">
    <table>
      <thead>
        <tr>
          ${headers.map((h) => markup`<th scope="col">${h}</th>`)}
        </tr>
      </thead>
      <tbody>
        ${rows.map(
          (r) =>
            markup`<tr>
              ${r.map((c) => markup`<td>${c}</td>`)}
            </tr>`,
        )}
      </tbody>
    </table>
  </div>`;
}
