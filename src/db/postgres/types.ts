import pg from 'pg';

/**
 * How PostgreSQL's numbers reach JavaScript. pg returns int8 (bigint, count(*)) and numeric
 * (sum()) as strings, to lose nothing; the rest of agentshelf (like SQLite's driver) expects
 * numbers. These give a number whenever it holds the value exactly, and otherwise a BigInt
 * (an integer past 2^53) or the string PostgreSQL wrote (a decimal no double holds): never a
 * silently rounded value.
 */

const INT8 = 20;
const NUMERIC = 1700;

/** int8 text as a number when it is a safe integer, else a BigInt. */
export function parseInt8(text: string): number | bigint {
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : BigInt(text);
}

/**
 * numeric text as a number when the number prints back as the same value, else a BigInt (a
 * whole number) or the text itself.
 */
export function parseNumeric(text: string): number | bigint | string {
  if (/^-?\d+$/.test(text)) return parseInt8(text);
  const m = /^(-?)(\d+)\.(\d*?)0*$/.exec(text);
  if (!m) return text; // NaN, Infinity
  const canonical = `${m[1] === '-' && /^0*$/.test(m[2]! + m[3]!) ? '' : m[1]}${m[2]!.replace(/^0+(?=\d)/, '')}${m[3] ? `.${m[3]}` : ''}`;
  const n = Number(canonical);
  if (!m[3]) return parseInt8(canonical);
  return String(n) === canonical ? n : text;
}

/** The type parsers of every connection of a PostgreSQL store. */
export const storeTypes: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: string) => {
    if (format !== 'binary') {
      if (oid === INT8) return parseInt8;
      if (oid === NUMERIC) return parseNumeric;
    }
    return pg.types.getTypeParser(oid, format as 'text');
  }) as pg.CustomTypesConfig['getTypeParser'],
};
