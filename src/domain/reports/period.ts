/** A period of whole UTC days, both ends included (the analytics' Period). */
export interface ReportPeriod {
  start: string;
  end: string;
}

/** Days a report period may span: a year and a day, so a leap year fits. */
export const MAX_PERIOD_DAYS = 366;
/** The period when none is given: the last 30 days, today included. */
export const DEFAULT_PERIOD_DAYS = 30;

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;
const DAY_MS = 86_400_000;

/** The UTC day (YYYY-MM-DD) of a date or an ISO 8601 date-time with a zone; undefined if neither. */
export function utcDayOf(value: string): string | undefined {
  const date = DATE.exec(value);
  if (date) {
    const ms = Date.UTC(Number(date[1]), Number(date[2]) - 1, Number(date[3]));
    const day = new Date(ms).toISOString().slice(0, 10);
    // Date.UTC rolls 2026-02-30 over to March: a day that does not exist is refused.
    return day === value ? day : undefined;
  }
  if (!DATE_TIME.test(value)) return undefined;
  const ms = Date.parse(value);
  if (!Number.isFinite(ms)) return undefined;
  const text = new Date(ms).toISOString();
  return text.length === 24 ? text.slice(0, 10) : undefined;
}

/** The day `n` days after `day` (before, when n is negative). */
export function addDays(day: string, n: number): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) + n * DAY_MS).toISOString().slice(0, 10);
}

/** Days from start to end, both included. */
export function daysIn(period: ReportPeriod): number {
  return Math.round((Date.parse(period.end) - Date.parse(period.start)) / DAY_MS) + 1;
}

/** Every day of the period, in order. */
export function eachDay(period: ReportPeriod): string[] {
  const n = daysIn(period);
  return Array.from({ length: n }, (_, i) => addDays(period.start, i));
}

export type PeriodProblem = { field: 'start_date' | 'end_date'; reason: string };

/**
 * The period a request names: both ends given, one (the other is DEFAULT_PERIOD_DAYS away),
 * or none (the last DEFAULT_PERIOD_DAYS days to today, UTC). A problem names its field.
 */
export function resolvePeriod(
  given: { start_date?: string | undefined; end_date?: string | undefined },
  now: Date,
): ReportPeriod | PeriodProblem {
  const start = given.start_date === undefined ? undefined : utcDayOf(given.start_date);
  const end = given.end_date === undefined ? undefined : utcDayOf(given.end_date);
  if (given.start_date !== undefined && start === undefined) {
    return { field: 'start_date', reason: 'must be a date (YYYY-MM-DD) or an ISO 8601 date-time' };
  }
  if (given.end_date !== undefined && end === undefined) {
    return { field: 'end_date', reason: 'must be a date (YYYY-MM-DD) or an ISO 8601 date-time' };
  }
  const today = now.toISOString().slice(0, 10);
  const period: ReportPeriod =
    start && end
      ? { start, end }
      : start
        ? { start, end: addDays(start, DEFAULT_PERIOD_DAYS - 1) }
        : end
          ? { start: addDays(end, -(DEFAULT_PERIOD_DAYS - 1)), end }
          : { start: addDays(today, -(DEFAULT_PERIOD_DAYS - 1)), end: today };
  if (period.end < period.start) {
    return { field: 'end_date', reason: 'must not be before start_date' };
  }
  if (daysIn(period) > MAX_PERIOD_DAYS) {
    return {
      field: 'end_date',
      reason: `must be at most ${MAX_PERIOD_DAYS} days after start_date`,
    };
  }
  return period;
}
