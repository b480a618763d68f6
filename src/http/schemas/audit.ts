import { AuditEntry, AuditLogFilter, untilAfterSince } from '../../domain/audit/log.js';
import { docFields } from './registry.js';
import { pageQuery } from './shared.js';

/**
 * The audit log's query string: the domain's filter (its since-before-until check kept),
 * with numbers read from text.
 */
export const AuditLogQueryString = untilAfterSince(AuditLogFilter.extend(pageQuery));

docFields(
  AuditEntry,
  {
    id: 'Increases with each entry written',
    time: 'When the request arrived (ISO 8601 UTC)',
    path: 'The path, without the query string',
  },
  { id: 'AuditEntry', description: 'One authenticated request' },
);
docFields(AuditLogFilter, {
  since: 'Entries at or after this date or date-time',
  until:
    'Entries before this date-time; a bare date includes that whole day (UTC). Pin it to page through a log that keeps growing.',
  status: 'A status code (429) or a class of them (4xx)',
});
