import type { CompiledQuery } from 'kysely';
import { z } from 'zod';
import type { Db } from '../../db/database.js';
import type { AuditLogRow, NewAuditLogRow } from '../../db/schema.js';
import { pageFields } from '../pagination.js';

export const AuditEntry = z.object({
  id: z.int(),
  time: z.string(),
  key_id: z.string(),
  method: z.string(),
  path: z.string(),
  status: z.int(),
  request_id: z.string(),
  client_ip: z.string().nullable(),
});
export type AuditEntry = z.infer<typeof AuditEntry>;

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

/** Date.parse reads 2026-11-31 as December 1st; refuse days the month does not have. */
function isCalendarDate(v: string): boolean {
  const [y, m, d] = v.slice(0, 10).split('-').map(Number) as [number, number, number];
  const probe = new Date(Date.UTC(y, m - 1, d));
  return probe.getUTCMonth() === m - 1 && probe.getUTCDate() === d;
}

/**
 * A date (`2026-11-21`, a whole UTC day) or a date-time with a zone, as an ISO string in UTC.
 * `end` makes a bare date mean the end of that day, so `until=2026-11-21` includes the 21st.
 */
function queryDate(end: boolean) {
  return z
    .string()
    .check((ctx) => {
      const v = ctx.value;
      if (
        (!DATE.test(v) && !DATE_TIME.test(v)) ||
        !isCalendarDate(v) ||
        Number.isNaN(Date.parse(v))
      ) {
        ctx.issues.push({
          code: 'custom',
          input: v,
          message: 'must be a date (2026-11-21) or a date-time with a zone (2026-11-21T10:00:00Z)',
        });
      }
    })
    .transform((v) => {
      const ms = Date.parse(DATE.test(v) ? `${v}T00:00:00Z` : v);
      return new Date(DATE.test(v) && end ? ms + 86_400_000 : ms).toISOString();
    });
}

/** The audit log's filter and page, without the check across fields (see AuditLogQuery). */
export const AuditLogFilter = z.strictObject({
  key_id: z.string().min(1).max(200).optional(),
  since: queryDate(false).optional(),
  until: queryDate(true).optional(),
  status: z
    .string()
    .regex(/^([1-5]\d\d|[1-5]xx)$/, 'must be a status code (429) or a class (4xx)')
    .optional(),
  ...pageFields,
});

/** Adds the check that `until`, when given with `since`, comes after it. */
export function untilAfterSince<T extends z.ZodType<{ since?: string; until?: string }>>(
  schema: T,
) {
  return schema.refine((q) => !q.since || !q.until || q.since < q.until, {
    message: 'must be after since',
    path: ['until'],
  });
}

export const AuditLogQuery = untilAfterSince(AuditLogFilter);
export type AuditLogQuery = z.infer<typeof AuditLogQuery>;

export const AuditLogPage = z.object({
  entries: z.array(AuditEntry),
  pagination: z.object({
    limit: z.int(),
    offset: z.int(),
    total: z.int(),
    has_more: z.boolean(),
  }),
});
export type AuditLogPage = z.infer<typeof AuditLogPage>;

export function presentAuditEntry(row: AuditLogRow): AuditEntry {
  return {
    id: row.id,
    time: row.created_at,
    key_id: row.api_key_id,
    method: row.method,
    path: row.path,
    status: row.status,
    request_id: row.request_id,
    client_ip: row.client_ip,
  };
}

/** An entry's column values, in the order of AUDIT_COLUMNS. */
export type AuditValues = [
  created_at: string,
  api_key_id: string,
  method: string,
  path: string,
  status: number,
  request_id: string,
  client_ip: string | null,
];

const AUDIT_COLUMNS = [
  'created_at',
  'api_key_id',
  'method',
  'path',
  'status',
  'request_id',
  'client_ip',
] as const;

// 7 parameters a row: 400 rows stay far below SQLite's limit on bound parameters.
const ROWS_PER_INSERT = 400;

function toObject(values: AuditValues): NewAuditLogRow {
  return Object.fromEntries(AUDIT_COLUMNS.map((c, i) => [c, values[i]])) as NewAuditLogRow;
}

// Building the statement for 400 rows cost about as much as SQLite took to insert them, and
// it is the same text every time: it is compiled once per store and reused with new values.
const fullChunkStatements = new WeakMap<Db, CompiledQuery>();

function fullChunkStatement(db: Db, chunk: AuditValues[]): CompiledQuery {
  let compiled = fullChunkStatements.get(db);
  if (!compiled) {
    compiled = db.insertInto('audit_log').values(chunk.map(toObject)).compile();
    // Objects built in AUDIT_COLUMNS order give placeholders in that order; check it held.
    if (compiled.parameters.join('\u0000') !== chunk.flat().join('\u0000')) {
      throw new Error('audit_log insert: unexpected statement shape');
    }
    fullChunkStatements.set(db, compiled);
  }
  return compiled;
}

/** Writes entries, given as column values, in one transaction. */
export async function insertAuditValues(db: Db, rows: AuditValues[]): Promise<void> {
  if (rows.length === 0) return;
  await db.transaction().execute(async (trx) => {
    for (let i = 0; i < rows.length; i += ROWS_PER_INSERT) {
      const chunk = rows.slice(i, i + ROWS_PER_INSERT);
      if (chunk.length < ROWS_PER_INSERT) {
        await trx.insertInto('audit_log').values(chunk.map(toObject)).execute();
      } else {
        await trx.executeQuery({ ...fullChunkStatement(db, chunk), parameters: chunk.flat() });
      }
    }
  });
}

/** Writes entries in one transaction. */
export async function insertAuditEntries(db: Db, rows: NewAuditLogRow[]): Promise<void> {
  await insertAuditValues(
    db,
    rows.map((r) => AUDIT_COLUMNS.map((c) => r[c] ?? null) as AuditValues),
  );
}

/** Newest first, filtered as the query says. */
export async function listAuditLog(db: Db, query: AuditLogQuery): Promise<AuditLogPage> {
  let q = db.selectFrom('audit_log');
  if (query.key_id) q = q.where('api_key_id', '=', query.key_id);
  if (query.since) q = q.where('created_at', '>=', query.since);
  if (query.until) q = q.where('created_at', '<', query.until);
  if (query.status) {
    if (query.status.endsWith('xx')) {
      const base = Number(query.status[0]) * 100;
      q = q.where('status', '>=', base).where('status', '<', base + 100);
    } else {
      q = q.where('status', '=', Number(query.status));
    }
  }
  const [rows, count] = await Promise.all([
    q
      .selectAll()
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(query.limit)
      .offset(query.offset)
      .execute(),
    q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirst(),
  ]);
  const total = Number(count?.n ?? 0);
  return {
    entries: rows.map(presentAuditEntry),
    pagination: {
      limit: query.limit,
      offset: query.offset,
      total,
      has_more: query.offset + rows.length < total,
    },
  };
}

/**
 * Deletes entries older than `before`, a few thousand at a time so a large sweep never holds
 * the write lock for long. Returns how many went.
 */
export async function sweepAuditLog(db: Db, before: Date, chunk = 5000): Promise<number> {
  const cutoff = before.toISOString();
  let deleted = 0;
  for (;;) {
    const result = await db
      .deleteFrom('audit_log')
      .where(
        'id',
        'in',
        db
          .selectFrom('audit_log')
          .select('id')
          .where('created_at', '<', cutoff)
          .orderBy('created_at')
          .limit(chunk),
      )
      .executeTakeFirst();
    const n = Number(result.numDeletedRows);
    deleted += n;
    if (n < chunk) return deleted;
    // Let requests in between the chunks.
    await new Promise((resolve) => setImmediate(resolve));
  }
}
