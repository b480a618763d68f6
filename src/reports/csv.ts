import { stringify } from 'csv-stringify/sync';

/**
 * Characters that make a spreadsheet read a cell as a formula (OWASP "CSV Injection"):
 * = + - @ and, since some applications strip them first, tab and carriage return; also
 * their full-width forms, which some spreadsheets fold into the ASCII ones.
 */
const FORMULA_START = /^[=+\-@\t\r\uFF1D\uFF0B\uFF0D\uFF20]/;

/** A cell's value as written: text that could start a formula gets a leading `'`. */
export type CsvCell = string | number | null | undefined;

/**
 * Neutralises a text cell a spreadsheet would run as a formula by prefixing `'` (shown as
 * text, the apostrophe hidden). Numbers the report computes stay numbers (a negative growth
 * rate is a number, not text that starts with `-`).
 */
export function safeCsvCell(value: CsvCell): string | number {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number') return value;
  return FORMULA_START.test(value) ? `'${value}` : value;
}

/** Rows as CSV text (RFC 4180: fields with a quote, comma, CR or LF are quoted), made safe. */
export function csvRows(rows: readonly (readonly CsvCell[])[]): string {
  return stringify(rows.map((row) => row.map(safeCsvCell)));
}
