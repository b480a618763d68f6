import { AuditLogPage, listAuditLog } from '../../domain/audit/log.js';
import { AuditLogQueryString } from '../schemas/audit.js';
import { defineRoute } from '../route.js';
import { ErrorResponses } from './shared.js';

export const auditLogRoutes = [
  defineRoute({
    method: 'get',
    path: '/v1/audit-log',
    operationId: 'listAuditLog',
    summary:
      'List authenticated requests, newest first: time, key, method, path, status, request id, client IP',
    tag: 'Audit log',
    permission: 'admin',
    query: AuditLogQueryString,
    responses: {
      200: { description: 'A page of audit entries', schema: AuditLogPage },
      ...ErrorResponses,
    },
    handler: async ({ query }, { db, audit }) => {
      // Entries are written in batches; write the queued ones so the page is up to date.
      await audit?.flush();
      return { body: await listAuditLog(db, query) };
    },
  }),
];
