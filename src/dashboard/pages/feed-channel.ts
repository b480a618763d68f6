/**
 * A feed's channel on its dashboard page (CONTRACT part 10): the profile and file a platform
 * takes, where the file goes (hosted, SFTP, an ACP Feed API, Stripe), the preview of the next
 * generation, and the delivery history with held deliveries to release. The forms here turn
 * into the API's FeedUpdate, so the API's rules and messages hold as they are.
 */
import type { AppError } from '../../errors.js';
import {
  FEED_DELIVERY_STATUSES,
  type FeedDeliveryRecord,
  type StoredDelivery,
} from '../../domain/feeds/delivery-schemas.js';
import {
  FEED_FORMATS,
  FEED_PROFILE_NAMES,
  type Feed,
  type FeedPreview,
  type FeedUpdateInput,
} from '../../domain/feeds/schemas.js';
import { markup, type Html } from '../../markup.js';
import type { Formatter } from '../format.js';
import { csrfField, field, table, type Viewer } from '../layout.js';

/** What each profile is for, as the channel select reads. */
export const PROFILE_LABELS: Readonly<Record<(typeof FEED_PROFILE_NAMES)[number], string>> = {
  agentshelf: 'agentshelf: our columns, every product listed',
  openai: 'OpenAI: the ChatGPT product feed',
  google: 'Google Merchant Center',
  acp: 'Agentic Commerce Protocol (ACP)',
  stripe: 'Stripe',
};

export const COMPRESSION_LABELS = { '': 'none', gzip: 'gzip' } as const;

const STRIPE_MODE_LABELS = {
  replace: "replace: Stripe's catalog becomes the file",
  upsert: 'upsert: add and update, keep the rest',
} as const;

/** Held when the product count falls more than this below the last delivered (percent). */
const DEFAULT_MAX_DROP_PERCENT = '20';

/** The form's field a refusal of the API names: `delivery.host` -> host, `settings.x.0` -> x. */
export function formFieldOf(error: AppError | undefined): string | undefined {
  const name = error?.field;
  if (!name) return undefined;
  if (name === 'credentials') return 'credentials';
  const [head, second] = name.split('.');
  if (head === 'delivery' && second === 'max_drop') return 'max_drop_percent';
  if ((head === 'delivery' || head === 'settings' || head === 'credentials') && second) {
    return second;
  }
  return head;
}

/** The error beside a form's field, when the refusal names it. */
function errorFor(error: AppError | undefined, ...names: string[]): string | undefined {
  const at = formFieldOf(error);
  return at !== undefined && names.includes(at) ? error!.message : undefined;
}

/** A refusal no field of these shows, above the form. */
function formError(error: AppError | undefined, names: string[]): Html | '' {
  if (!error) return '';
  const at = formFieldOf(error);
  return at !== undefined && names.includes(at)
    ? ''
    : markup`<div class="error" role="alert">${error.message}</div>`;
}

/** Where the feed's file goes, in words. */
export function describeDelivery(d: StoredDelivery, credentialsSet: boolean): Html {
  const drop = (maxDrop: number) =>
    `held when the product count falls more than ${Math.round(maxDrop * 100)}% below the last delivered`;
  switch (d.type) {
    case 'hosted':
      return markup`hosted: channels fetch the export address`;
    case 'sftp':
      return markup`SFTP to <code>${d.username}@${d.host}:${String(d.port)}${d.path}</code>
        (host key <code>${d.host_key_sha256}</code>; ${credentialsSet ? 'credentials set' : 'no credentials'});
        ${drop(d.max_drop)}`;
    case 'acp_feed_api':
      return markup`ACP Feed API <code>${d.url}</code>, feed <code>${d.feed_id}</code>
        (${credentialsSet ? 'token set' : 'no token'}); ${drop(d.max_drop)}`;
    case 'stripe':
      return markup`Stripe's product catalog import (${d.mode}) at <code>${d.api_url}</code>
        (${credentialsSet ? 'key set' : 'no key'}); ${drop(d.max_drop)}`;
  }
}

/** The channel's lines of the feed's description list. */
export function channelDetails(f: Feed): Html {
  const s = f.settings;
  const settings = [
    s.target_countries ? `sold to ${s.target_countries.join(', ')}` : '',
    s.store_country ? `ships from ${s.store_country}` : '',
    s.seller_name ? `seller ${s.seller_name}` : '',
  ].filter(Boolean);
  return markup`<dt>Channel</dt>
    <dd>${PROFILE_LABELS[f.profile]}</dd>
    <dt>File</dt>
    <dd>${f.format}${f.compression ? `, ${f.compression}` : ''}</dd>
    <dt>Channel settings</dt>
    <dd>${settings.length > 0 ? settings.join('; ') : "the store's own (its country and name)"}</dd>
    <dt>Delivery</dt>
    <dd>${describeDelivery(f.delivery, f.credentials_set)}</dd>`;
}

const CHANNEL_FIELDS = [
  'profile',
  'format',
  'compression',
  'target_countries',
  'store_country',
  'seller_name',
];

/** A form of a feed's page: where it posts, and what a refused post sent and got back. */
export interface FeedForm {
  viewer: Viewer;
  action: string;
  feed: Feed;
  values?: Record<string, string> | undefined;
  error?: AppError | undefined;
}

/** The form that changes the profile, the file and the channel settings. */
export function channelForm({ viewer, action, feed: f, values, error }: FeedForm): Html {
  const v = values ?? {
    profile: f.profile,
    format: f.format,
    compression: f.compression ?? '',
    target_countries: f.settings.target_countries?.join(', ') ?? '',
    store_country: f.settings.store_country ?? '',
    seller_name: f.settings.seller_name ?? '',
  };
  return markup`<form class="box" method="post" action="${action}" novalidate>
    ${csrfField(viewer)}
    <h3>Channel and file</h3>
    ${formError(error, CHANNEL_FIELDS)}
    ${field({ name: 'profile', id: 'c-profile', label: 'Channel', value: v.profile, options: FEED_PROFILE_NAMES, labels: PROFILE_LABELS, error: errorFor(error, 'profile') })}
    ${field({ name: 'format', id: 'c-format', label: 'Format', value: v.format, options: FEED_FORMATS, error: errorFor(error, 'format'), hint: 'OpenAI takes jsonl, csv, tsv or xml; Google tsv or xml; ACP jsonl or csv; Stripe csv.' })}
    ${field({ name: 'compression', id: 'c-compression', label: 'Compression', value: v.compression, options: ['', 'gzip'], labels: COMPRESSION_LABELS, error: errorFor(error, 'compression') })}
    ${field({ name: 'target_countries', label: 'Countries sold to (optional)', value: v.target_countries, hint: 'ISO codes separated by commas, such as US, CA', error: errorFor(error, 'target_countries') })}
    ${field({ name: 'store_country', label: 'Country shipped from (optional)', value: v.store_country, hint: 'Such as US', error: errorFor(error, 'store_country') })}
    ${field({ name: 'seller_name', label: 'Seller name (optional)', value: v.seller_name, error: errorFor(error, 'seller_name') })}
    <button type="submit">Save the channel</button>
  </form>`;
}

/** The FeedUpdate a channel form asks for. */
export function channelInput(form: Record<string, string>): FeedUpdateInput {
  const countries = (form.target_countries ?? '')
    .split(',')
    .map((c) => c.trim().toUpperCase())
    .filter(Boolean);
  const settings: Record<string, unknown> = {};
  if (countries.length > 0) settings.target_countries = countries;
  if (form.store_country?.trim()) settings.store_country = form.store_country.trim().toUpperCase();
  if (form.seller_name?.trim()) settings.seller_name = form.seller_name.trim();
  return {
    profile: form.profile,
    format: form.format,
    compression: form.compression ? form.compression : null,
    settings: Object.keys(settings).length > 0 ? settings : null,
  } as FeedUpdateInput;
}

const SFTP_FIELDS = [
  'host',
  'port',
  'username',
  'path',
  'host_key_sha256',
  'max_drop_percent',
  'password',
  'private_key',
  'credentials',
];
const ACP_FIELDS = ['url', 'feed_id', 'max_drop_percent', 'token', 'credentials'];
const STRIPE_FIELDS = ['mode', 'max_drop_percent', 'api_key', 'webhook_secret', 'credentials'];

/**
 * The delivery forms: one per push type, each with only its own fields, and a button back to
 * hosted. Secrets are never written back into a form; left empty, the stored ones are kept.
 */
export function deliveryForms({ viewer, action, feed: f, values, error }: FeedForm): Html {
  const d = f.delivery;
  const posted = (type: string) => (values?.type === type ? values : undefined);
  const sftp = posted('sftp') ?? {
    host: d.type === 'sftp' ? d.host : '',
    port: d.type === 'sftp' ? String(d.port) : '22',
    username: d.type === 'sftp' ? d.username : '',
    path: d.type === 'sftp' ? d.path : '',
    host_key_sha256: d.type === 'sftp' ? d.host_key_sha256 : '',
    max_drop_percent:
      d.type === 'sftp' ? String(Math.round(d.max_drop * 100)) : DEFAULT_MAX_DROP_PERCENT,
  };
  const acp = posted('acp_feed_api') ?? {
    url: d.type === 'acp_feed_api' ? d.url : '',
    feed_id: d.type === 'acp_feed_api' ? d.feed_id : '',
    max_drop_percent:
      d.type === 'acp_feed_api' ? String(Math.round(d.max_drop * 100)) : DEFAULT_MAX_DROP_PERCENT,
  };
  const stripe = posted('stripe') ?? {
    mode: d.type === 'stripe' ? d.mode : 'replace',
    max_drop_percent:
      d.type === 'stripe' ? String(Math.round(d.max_drop * 100)) : DEFAULT_MAX_DROP_PERCENT,
  };
  const sftpError = values?.type === 'sftp' ? error : undefined;
  const acpError = values?.type === 'acp_feed_api' ? error : undefined;
  const stripeError = values?.type === 'stripe' ? error : undefined;
  const keep = (set: boolean) => (set ? 'Leave empty to keep the one stored.' : undefined);
  const same = (type: string) => d.type === type && f.credentials_set;
  const drop = (v: Record<string, string>, e: AppError | undefined, id: string) =>
    field({
      name: 'max_drop_percent',
      id,
      label: 'Hold a delivery when the product count falls by more than (%)',
      type: 'number',
      value: v.max_drop_percent,
      error: errorFor(e, 'max_drop_percent'),
      hint: 'A held delivery waits for you to release it here.',
    });
  return markup`<details class="box"${values?.type === 'sftp' ? markup` open` : ''}>
      <summary>Send it by SFTP</summary>
      <form method="post" action="${action}" novalidate>
        ${csrfField(viewer)}<input type="hidden" name="type" value="sftp" />
        ${formError(sftpError, SFTP_FIELDS)}
        ${field({ name: 'host', label: 'Host', value: sftp.host, error: errorFor(sftpError, 'host'), hint: 'sftp.example.com' })}
        ${field({ name: 'port', label: 'Port', type: 'number', value: sftp.port, error: errorFor(sftpError, 'port') })}
        ${field({ name: 'username', label: 'User name', value: sftp.username, error: errorFor(sftpError, 'username') })}
        ${field({ name: 'path', label: 'File path on the server', value: sftp.path, error: errorFor(sftpError, 'path'), hint: '/feeds/products.jsonl.gz' })}
        ${field({ name: 'host_key_sha256', label: 'Host key fingerprint', value: sftp.host_key_sha256, error: errorFor(sftpError, 'host_key_sha256'), hint: 'As ssh-keygen -lf prints it: SHA256:…' })}
        ${drop(sftp, sftpError, 'f-sftp-max-drop')}
        ${field({ name: 'password', label: 'Password', type: 'password', error: errorFor(sftpError, 'password', 'credentials'), hint: keep(same('sftp')) ?? 'Or a private key below.' })}
        ${field({ name: 'private_key', label: 'Private key (OpenSSH)', textarea: true, error: errorFor(sftpError, 'private_key'), hint: keep(same('sftp')) })}
        <button type="submit">Send by SFTP</button>
      </form>
    </details>
    <details class="box"${values?.type === 'acp_feed_api' ? markup` open` : ''}>
      <summary>Send it to an ACP Feed API</summary>
      <form method="post" action="${action}" novalidate>
        ${csrfField(viewer)}<input type="hidden" name="type" value="acp_feed_api" />
        ${formError(acpError, ACP_FIELDS)}
        <p class="muted">Takes the ACP channel in jsonl.</p>
        ${field({ name: 'url', label: 'Feed API address', value: acp.url, error: errorFor(acpError, 'url'), hint: 'https://api.example.com/acp' })}
        ${field({ name: 'feed_id', label: 'Feed id at the API', value: acp.feed_id, error: errorFor(acpError, 'feed_id') })}
        ${drop(acp, acpError, 'f-acp-max-drop')}
        ${field({ name: 'token', label: 'Bearer token', type: 'password', error: errorFor(acpError, 'token', 'credentials'), hint: keep(same('acp_feed_api')) })}
        <button type="submit">Send to the Feed API</button>
      </form>
    </details>
    <details class="box"${values?.type === 'stripe' ? markup` open` : ''}>
      <summary>Import it into Stripe's product catalog</summary>
      <form method="post" action="${action}" novalidate>
        ${csrfField(viewer)}<input type="hidden" name="type" value="stripe" />
        ${formError(stripeError, STRIPE_FIELDS)}
        <p class="muted">Takes the Stripe channel in csv.</p>
        ${field({ name: 'mode', id: 'f-stripe-mode', label: 'Import mode', value: stripe.mode, options: ['replace', 'upsert'], labels: STRIPE_MODE_LABELS, error: errorFor(stripeError, 'mode') })}
        ${drop(stripe, stripeError, 'f-stripe-max-drop')}
        ${field({ name: 'api_key', label: 'Secret or restricted key', type: 'password', error: errorFor(stripeError, 'api_key', 'credentials'), hint: keep(same('stripe')) ?? 'A restricted key needs the Product Catalog Import write permission.' })}
        ${field({ name: 'webhook_secret', label: 'Event destination signing secret (optional)', type: 'password', error: errorFor(stripeError, 'webhook_secret'), hint: keep(same('stripe')) ?? 'whsec_…, to take the import events Stripe sends.' })}
        <button type="submit">Import into Stripe</button>
      </form>
    </details>
    ${
      d.type !== 'hosted'
        ? markup`<form class="inline" method="post" action="${action}">
            ${csrfField(viewer)}<input type="hidden" name="type" value="hosted" />
            <button type="submit" class="secondary">Stop sending: hosted only</button>
          </form>`
        : ''
    }`;
}

/** The FeedUpdate a delivery form asks for (numbers as the API takes them). */
export function deliveryInput(form: Record<string, string>): FeedUpdateInput {
  const number = (v: string | undefined) =>
    v === undefined || v.trim() === '' ? undefined : Number(v);
  const maxDrop = number(form.max_drop_percent);
  const drop = maxDrop === undefined ? {} : { max_drop: maxDrop / 100 };
  const secrets = (names: string[]) => {
    const given = Object.fromEntries(names.flatMap((n) => (form[n] ? [[n, form[n]]] : [])));
    return Object.keys(given).length > 0 ? { credentials: given } : {};
  };
  switch (form.type) {
    case 'sftp':
      return {
        delivery: {
          type: 'sftp',
          host: form.host ?? '',
          port: number(form.port),
          username: form.username ?? '',
          path: form.path ?? '',
          host_key_sha256: (form.host_key_sha256 ?? '').trim(),
          ...drop,
        },
        ...secrets(['password', 'private_key']),
      } as FeedUpdateInput;
    case 'acp_feed_api':
      return {
        delivery: {
          type: 'acp_feed_api',
          url: (form.url ?? '').trim(),
          feed_id: (form.feed_id ?? '').trim(),
          ...drop,
        },
        ...secrets(['token']),
      } as FeedUpdateInput;
    case 'stripe':
      return {
        delivery: { type: 'stripe', mode: form.mode, ...drop },
        ...secrets(['api_key', 'webhook_secret']),
      } as FeedUpdateInput;
    default:
      return { delivery: null, credentials: null };
  }
}

/** The delivery history's table: newest first, with a release button on held ones. */
export function deliveryTable(
  viewer: Viewer | undefined,
  releaseAction: (id: string) => string,
  deliveries: FeedDeliveryRecord[],
  fmt: Formatter,
): Html {
  return table(
    ['Generated', 'State', 'Products', 'Size', 'Attempts', 'What happened', ''],
    deliveries.map((d) => [
      markup`${fmt.when(d.created_at)}<br /><code class="muted">${d.id}</code>`,
      d.status,
      fmt.number(d.products),
      fmt.bytes(d.bytes),
      fmt.number(d.attempts),
      markup`${d.error ?? d.reason ?? (d.finished_at ? markup`done ${fmt.when(d.finished_at)}` : '—')}${d.next_attempt_at ? markup`<br /><span class="muted">next try ${fmt.when(d.next_attempt_at)}</span>` : ''}`,
      viewer && d.status === 'held'
        ? markup`<form class="inline" method="post" action="${releaseAction(d.id)}">
            ${csrfField(viewer)}<button type="submit">Release: send it</button>
          </form>`
        : '',
    ]),
  );
}

/** The delivery states a history filters by ('' is every state). */
export const DELIVERY_STATE_OPTIONS = ['', ...FEED_DELIVERY_STATUSES] as const;

/** A preview's reasons: what each is, how many products, and links to up to 20 of them. */
export function previewReasons(
  reasons: FeedPreview['excluded_by_reason'],
  fmt: Formatter,
  productLink: (id: string) => string,
): Html {
  return table(
    ['Field', 'Problem', 'What to do', 'Products', 'Some of them'],
    reasons.map((r) => [
      r.field,
      r.problem,
      r.message,
      fmt.number(r.count),
      markup`${r.product_ids.map((id, i) => markup`${i > 0 ? ', ' : ''}<a href="${productLink(id)}"><code>${id}</code></a>`)}`,
    ]),
  );
}
