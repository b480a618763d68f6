import { sql } from 'kysely';
import type { Db } from '../store.js';

/** A key's windows after one request was decided, as stored. */
export interface StoredWindows {
  burst_start_ms: number;
  burst_count: number;
  minute_start_ms: number;
  minute_count: number;
  month_count: number;
  allowed: boolean;
}

export interface WindowRequest {
  keyId: string;
  nowMs: number;
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
 * Decides one request against a key's stored windows and counts it when allowed, in one
 * statement (an upsert), so requests of every process on the store are decided one after
 * the other against the same counts: N concurrent requests on a key allowing M < N let
 * exactly M through, whichever processes they reach. A window that has ended opens again
 * with the request; a month the row has not counted yet starts from api_key_usage.
 */
export async function decideRequest(db: Db, r: WindowRequest): Promise<StoredWindows> {
  const t = sql.table('rate_limit_windows');
  const col = (c: string) => sql.ref(`rate_limit_windows.${c}`);
  const monthly = r.monthly ?? Number.MAX_SAFE_INTEGER;
  // Each expression over the stored row, repeated where needed: SET cannot read its own output.
  const burstOver = sql`${r.nowMs} >= ${col('burst_start_ms')} + ${r.burstMs}`;
  const minuteOver = sql`${r.nowMs} >= ${col('minute_start_ms')} + ${r.minuteMs}`;
  const seed = sql`coalesce((select requests from api_key_usage where api_key_id = ${r.keyId} and month = ${r.month}), 0)`;
  const burstCount = sql`(case when ${burstOver} then 0 else ${col('burst_count')} end)`;
  const minuteCount = sql`(case when ${minuteOver} then 0 else ${col('minute_count')} end)`;
  const monthCount = sql`(case when ${col('month')} = ${r.month} then ${col('month_count')} else ${seed} end)`;
  const allowed = sql`(case when ${burstCount} < ${r.burst} and ${minuteCount} < ${r.perMinute} and ${monthCount} < ${monthly} then 1 else 0 end)`;
  const firstAllowed = sql`(case when 0 < ${r.burst} and 0 < ${r.perMinute} and ${seed} < ${monthly} then 1 else 0 end)`;
  const { rows } = await sql<Record<keyof StoredWindows | 'last_allowed', number | string>>`
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
    allowed: Number(row.last_allowed) === 1,
  };
}
