import { markup, type Html } from '../markup.js';

/**
 * Money, numbers and times as people read them, in the language the browser asks for
 * (Accept-Language; English when it asks for nothing we can write). The one place the
 * dashboard's pages format a value for reading: amounts per currency with its ISO 4217 minor
 * units (`Intl.NumberFormat`), times as the locale's short form (UTC) or "5 minutes ago" inside
 * `<time datetime>` with the exact UTC time on hover.
 */
export const DEFAULT_LOCALE = 'en';

/** The first language of an Accept-Language header that Intl can write (by q), else English. */
export function localeOf(acceptLanguage: string | undefined): string {
  if (!acceptLanguage) return DEFAULT_LOCALE;
  const asked = acceptLanguage
    .split(',')
    .slice(0, 20)
    .map((part, i) => {
      const [tag = '', ...params] = part.trim().split(';');
      const q = params.map((p) => /^\s*q=([0-9.]+)\s*$/.exec(p)?.[1]).find((v) => v);
      return { tag: tag.trim(), q: q === undefined ? 1 : Number(q), i };
    })
    .filter((a) => a.tag !== '' && a.tag !== '*' && a.q > 0 && /^[A-Za-z0-9-]{2,35}$/.test(a.tag))
    .sort((a, b) => b.q - a.q || a.i - b.i);
  for (const { tag } of asked) {
    try {
      const [supported] = Intl.NumberFormat.supportedLocalesOf([tag]);
      if (supported) return supported;
    } catch {
      // Not a well-formed language tag: try the next one.
    }
  }
  return DEFAULT_LOCALE;
}

/**
 * A value kept under its key in a map that is emptied when it reaches `limit` entries (the
 * dashboard's caches: what one page writes repeats on every load, and its keys are few).
 */
function bounded<K, V>(map: Map<K, V>, key: K, make: () => V, limit = 5000): V {
  let value = map.get(key);
  if (value === undefined) {
    if (map.size >= limit) map.clear();
    map.set(key, (value = make()));
  }
  return value;
}

/** Intl objects are costly to build: kept per locale and options. */
const kept = new Map<string, Intl.NumberFormat | Intl.DateTimeFormat | Intl.RelativeTimeFormat>();

function keep<T extends Intl.NumberFormat | Intl.DateTimeFormat | Intl.RelativeTimeFormat>(
  key: string,
  make: () => T,
): T {
  return bounded(kept, key, make, 500) as T;
}

const UNITS: [Intl.RelativeTimeFormatUnit, number][] = [
  ['day', 86_400_000],
  ['hour', 3_600_000],
  ['minute', 60_000],
  ['second', 1000],
];

/** Intl's sanctioned units of size, by powers of 1,000. */
const BYTE_UNITS = ['byte', 'kilobyte', 'megabyte', 'gigabyte', 'terabyte'] as const;

/** Times nearer than this are written relative to now ("5 minutes ago"), others as dates. */
const RELATIVE_WITHIN_MS = 7 * 86_400_000;

/** A time read from the store, with the forms every page writes of it. */
interface Stamp {
  ms: number;
  /** The exact time as ISO 8601 (the `datetime` attribute). */
  iso: string;
  /** The exact UTC time, for the hover title: 2026-11-27 00:28:48 UTC. */
  exact: string;
}

/**
 * Parsed times and formatted texts, kept in bounded maps: a page of 50 rows writes the same
 * few hundred values on every load, and parsing a date or running Intl's formatters per value
 * was most of such a page's CPU.
 */
const stamps = new Map<string, Stamp | null>();
const texts = new Map<string, string>();

function stampOf(iso: string | null | undefined): Stamp | undefined {
  if (!iso) return undefined;
  return (
    bounded(stamps, iso, () => {
      const date = new Date(iso);
      const ms = date.getTime();
      if (Number.isNaN(ms)) return null;
      const exact = date.toISOString();
      return { ms, iso: exact, exact: `${exact.slice(0, 19).replace('T', ' ')} UTC` };
    }) ?? undefined
  );
}

/** Numbers as written, per locale and decimals: the counts of a page repeat on every load. */
const numberTexts = new Map<string, Map<number, string>>();

export class Formatter {
  /** This request's number formatters and their written texts, by decimals. */
  private readonly numbers = new Map<
    number,
    { format: Intl.NumberFormat; written: Map<number, string> }
  >();

  constructor(
    readonly locale: string,
    private readonly now: () => Date,
  ) {}

  /** An amount in its currency: 89.5 USD -> $89.50 (en), 89,50 € (de), ¥1,200 (JPY). */
  money(amount: number | null | undefined, currency: string): string {
    if (amount === undefined || amount === null) return '—';
    try {
      return keep(`m\u0000${this.locale}\u0000${currency}`, () => {
        return new Intl.NumberFormat(this.locale, { style: 'currency', currency });
      }).format(amount);
    } catch {
      return `${amount} ${currency}`;
    }
  }

  /** A count or a measure, with at most `digits` decimals; a dash for nothing. */
  number(value: number | null | undefined, digits = 0): string {
    if (value === undefined || value === null) return '—';
    let kind = this.numbers.get(digits);
    if (!kind) {
      const key = `n\u0000${this.locale}\u0000${digits}`;
      const format = keep(key, () => {
        return new Intl.NumberFormat(this.locale, { maximumFractionDigits: digits });
      });
      const written = bounded(numberTexts, key, () => new Map<number, string>(), 500);
      this.numbers.set(digits, (kind = { format, written }));
    }
    const { format, written } = kind;
    return bounded(written, value, () => format.format(value));
  }

  /** A size in bytes in the largest unit under 1,000 of it: 1,234,567 -> 1.2 MB (decimal units). */
  bytes(value: number | null | undefined): string {
    if (value === undefined || value === null) return '—';
    let unit = 0;
    let n = value;
    while (n >= 1000 && unit < BYTE_UNITS.length - 1) {
      n /= 1000;
      unit++;
    }
    const name = BYTE_UNITS[unit]!;
    return keep(`b\u0000${this.locale}\u0000${name}`, () => {
      return new Intl.NumberFormat(this.locale, {
        style: 'unit',
        unit: name,
        unitDisplay: 'short',
        maximumFractionDigits: unit === 0 ? 0 : 1,
      });
    }).format(n);
  }

  /** A fraction as a percentage with one decimal: 0.125 -> 12.5%. */
  percent(value: number | null | undefined): string {
    if (value === undefined || value === null) return '—';
    return keep(`p\u0000${this.locale}`, () => {
      return new Intl.NumberFormat(this.locale, {
        style: 'percent',
        minimumFractionDigits: 1,
        maximumFractionDigits: 1,
      });
    }).format(value);
  }

  /** A time as the locale's short date and time (UTC), exact UTC on hover. */
  date(iso: string | null | undefined, missing = '—'): Html | string {
    const stamp = stampOf(iso);
    if (!stamp) return iso ?? missing;
    const text = bounded(texts, `d\u0000${this.locale}\u0000${stamp.ms}`, () =>
      keep(`d\u0000${this.locale}`, () => {
        return new Intl.DateTimeFormat(this.locale, {
          dateStyle: 'medium',
          timeStyle: 'short',
          timeZone: 'UTC',
        });
      }).format(stamp.ms),
    );
    return markup`<time datetime="${stamp.iso}" title="${stamp.exact}"
      >${text} UTC</time
    >`;
  }

  /** A day (YYYY-MM-DD or a time) as the locale's short date. */
  day(iso: string | null | undefined, missing = '—'): Html | string {
    const stamp = stampOf(iso);
    if (!stamp) return iso ?? missing;
    const text = bounded(texts, `y\u0000${this.locale}\u0000${stamp.ms}`, () =>
      keep(`y\u0000${this.locale}`, () => {
        return new Intl.DateTimeFormat(this.locale, { dateStyle: 'medium', timeZone: 'UTC' });
      }).format(stamp.ms),
    );
    return markup`<time datetime="${stamp.iso.slice(0, 10)}" title="${stamp.exact}"
      >${text}</time
    >`;
  }

  /** A time relative to now when it is within a week ("5 minutes ago"), else as date(). */
  when(iso: string | null | undefined, missing = '—'): Html | string {
    const stamp = stampOf(iso);
    if (!stamp) return iso ?? missing;
    const diff = stamp.ms - this.now().getTime();
    if (Math.abs(diff) >= RELATIVE_WITHIN_MS) return this.date(iso, missing);
    const [unit, size] = UNITS.find(([, ms]) => Math.abs(diff) >= ms) ?? UNITS[UNITS.length - 1]!;
    const count = Math.trunc(diff / size);
    const text = bounded(texts, `r\u0000${this.locale}\u0000${unit}\u0000${count}`, () =>
      keep(`r\u0000${this.locale}`, () => {
        return new Intl.RelativeTimeFormat(this.locale, { numeric: 'auto' });
      }).format(count, unit),
    );
    return markup`<time datetime="${stamp.iso}" title="${stamp.exact}">${text}</time>`;
  }
}
