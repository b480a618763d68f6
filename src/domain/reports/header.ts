import type { ReportRow } from '../../db/schema.js';

/** What every report says about itself (the `report` object of the JSON formats). */
export interface ReportHeader {
  id: string;
  type: ReportRow['type'];
  store: string;
  generated_at: string;
  period: { start: string; end: string } | null;
}

export function reportHeader(row: ReportRow, store: string, now: Date): ReportHeader {
  return {
    id: row.id,
    type: row.type,
    store,
    generated_at: now.toISOString(),
    period: row.start_date && row.end_date ? { start: row.start_date, end: row.end_date } : null,
  };
}
