import { sql, type RawBuilder } from 'kysely';
import { dialectOf } from '../dialect.js';
import type { Db } from '../store.js';

/** A key's windows after a batch of its requests was decided, as stored. */
export interface StoredWindows {
  burst_start_ms: number;
  burst_count: number;
  minute_start_ms: number;
  minute_count: number;
  month_count: number;
  /** How many of the batch's requests were let through (and counted): the first ones. */
  allowed: number;
}

export interface WindowRequest {
  keyId: string;
  nowMs: number;
  /** Requests decided at once (at least 1): as many as the windows have room for go through. */
  count: number;
  burstMs: number;
  minuteMs: number;
  burst: number;
  perMinute: number;
  /** `YYYY-MM` of nowMs. */
  month: string;
  /** null: no monthly quota. */
  monthly: number | null;
}

/**
 * Decides a batch of a key's requests against its stored windows and counts the ones let
 * through, in one statement (an upsert), so requests of every process on the store are
 * decided one batch after the other against the same counts: N concurrent requests on a key
 * allowing M < N let exactly M through, whichever processes they reach. A batch of `count`
 * lets through as many as every window still has room for, at most `count`. A window that
 * has ended opens again with the batch; a month the row has not counted yet starts from
 * api_key_usage.
 */
export async function decideRequest(db: Db, r: WindowRequest): Promise<StoredWindows> {
  if (!Number.isSafeInteger(r.count) || r.count < 1) throw new Error('decideRequest: count < 1');
  const t = sql.table('rate_limit_windows');
  const col = (c: string) => sql.ref(`rate_limit_windows.${c}`);
  const { least } = dialectOf(db);
  const monthly = r.monthly ?? Number.MAX_SAFE_INTEGER;
  const count = sql<number>`${r.count}`;
  // Each expression over the stored row, repeated where needed: SET cannot read its own output.
  const burstOver = sql`${r.nowMs} >= ${col('burst_start_ms')} + ${r.burstMs}`;
  const minuteOver = sql`${r.nowMs} >= ${col('minute_start_ms')} + ${r.minuteMs}`;
  const seed = sql<number>`coalesce((select requests from api_key_usage where api_key_id = ${r.keyId} and month = ${r.month}), 0)`;
  const burstCount = sql<number>`(case when ${burstOver} then 0 else ${col('burst_count')} end)`;
  const minuteCount = sql<number>`(case when ${minuteOver} then 0 else ${col('minute_count')} end)`;
  const monthCount = sql<number>`(case when ${col('month')} = ${r.month} then ${col('month_count')} else ${seed} end)`;
  const room = (limit: number, used: RawBuilder<number>) => sql<number>`${limit} - ${used}`;
  // Let through: the batch, or what the fullest window has room for (never below 0).
  const allowed = sql<number>`(case when ${burstCount} < ${r.burst} and ${minuteCount} < ${r.perMinute} and ${monthCount} < ${monthly} then ${least(count, room(r.burst, burstCount), room(r.perMinute, minuteCount), room(monthly, monthCount))} else 0 end)`;
  const firstAllowed = sql<number>`(case when 0 < ${r.burst} and 0 < ${r.perMinute} and ${seed} < ${monthly} then ${least(count, sql<number>`${r.burst}`, sql<number>`${r.perMinute}`, room(monthly, seed))} else 0 end)`;
  const { rows } = await sql<
    Record<Exclude<keyof StoredWindows, 'allowed'> | 'last_allowed', number | string>
  >`
    insert into ${t} (api_key_id, burst_start_ms, burst_count, minute_start_ms, minute_count, month, month_count, last_allowed)
    values (${r.keyId}, ${r.nowMs}, ${firstAllowed}, ${r.nowMs}, ${firstAllowed}, ${r.month}, ${seed} + ${firstAllowed}, ${firstAllowed})
    on conflict (api_key_id) do update set
      burst_start_ms = case when ${burstOver} then ${r.nowMs} else ${col('burst_start_ms')} end,
      burst_count = ${burstCount} + ${allowed},
      minute_start_ms = case when ${minuteOver} then ${r.nowMs} else ${col('minute_start_ms')} end,
      minute_count = ${minuteCount} + ${allowed},
      month = ${r.month},
      month_count = ${monthCount} + ${allowed},
      last_allowed = ${allowed}
    returning burst_start_ms, burst_count, minute_start_ms, minute_count, month_count, last_allowed`.execute(
    db,
  );
  const row = rows[0]!;
  return {
    burst_start_ms: Number(row.burst_start_ms),
    burst_count: Number(row.burst_count),
    minute_start_ms: Number(row.minute_start_ms),
    minute_count: Number(row.minute_count),
    month_count: Number(row.month_count),
    allowed: Number(row.last_allowed),
  };
}
