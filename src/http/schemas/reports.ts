import {
  Report,
  ReportCreate,
  ReportDate,
  ReportList,
  ReportListQuery,
} from '../../domain/reports/schemas.js';
import { doc, docFields } from './registry.js';
import { pageQuery } from './shared.js';

/** The report list's query string, with numbers read from text. */
export const ReportListQueryString = ReportListQuery.extend(pageQuery);

doc(ReportDate, 'A date (YYYY-MM-DD) or an ISO 8601 date-time, read as its UTC day');
docFields(
  ReportCreate,
  {
    type: "analytics (metrics, daily series, top products and agents), products (the whole catalogue with its analytics) or feed_diagnostics (every feed and its last run's issues)",
    format:
      'csv, json, or html (one self-contained page with charts, readable offline and printed)',
    start_date:
      'First day of the period (UTC), default end_date minus 29 days; not for feed_diagnostics',
    end_date:
      'Last day of the period (UTC), default today, or start_date plus 29 days; at most 366 days in all',
  },
  { id: 'ReportCreate', description: 'What to generate' },
);
docFields(
  Report,
  {
    status:
      'pending while generating, then ready (download it) or failed (failure_reason says why)',
    start_date: 'First day of the period; null for feed_diagnostics',
    end_date: 'Last day of the period; null for feed_diagnostics',
    file_name: 'The name the download is given',
    content_type: "The file's media type",
    bytes: "The file's size once ready",
    download_url: 'Where to download the file once ready: {base_url}/v1/reports/<id>/download',
    failure_reason: 'Why generation failed',
    finished_at: 'When generation ended (ready or failed)',
  },
  { id: 'Report', description: 'A generated report' },
);
doc(ReportList, { id: 'ReportList', description: 'A page of reports, newest first' });
