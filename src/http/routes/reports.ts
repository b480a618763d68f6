import { z } from 'zod';
import {
  createReport,
  deleteReport,
  findReadyReport,
  getReport,
  listReports,
} from '../../domain/reports/reports.js';
import { reportFilePath } from '../../domain/reports/files.js';
import { Report, ReportCreate, ReportList } from '../../domain/reports/schemas.js';
import { attachmentDisposition, servePublishedFile } from '../file-response.js';
import { defineRoute } from '../route.js';
import { ReportListQueryString } from '../schemas/reports.js';
import { ErrorResponses } from './shared.js';
import { notFound } from '../../errors.js';

const IdParams = z.object({ id: z.string().min(1).max(200) });

export const reportRoutes = [
  defineRoute({
    method: 'get',
    path: '/v1/reports',
    operationId: 'listReports',
    summary: 'List reports, newest first, filtered by type, format and status',
    tag: 'Reports',
    permission: 'read',
    query: ReportListQueryString,
    responses: { 200: { description: 'A page of reports', schema: ReportList }, ...ErrorResponses },
    handler: async ({ query }, { db, config }) => {
      const { limit, offset, ...filter } = query;
      return { body: await listReports(db, filter, { limit, offset }, config.BASE_URL) };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/v1/reports',
    operationId: 'createReport',
    summary:
      'Request a report: 201 with status pending; it is generated in the background, then ready (or failed)',
    tag: 'Reports',
    permission: 'write',
    body: ReportCreate,
    idempotent: true,
    responses: { 201: { description: 'The new report', schema: Report }, ...ErrorResponses },
    handler: async ({ body }, deps) => {
      const report = await createReport(deps.db, body, deps.config.BASE_URL, deps.now());
      return { status: 201, body: report, headers: { Location: `/v1/reports/${report.id}` } };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/reports/:id',
    operationId: 'getReport',
    summary: 'Get a report: its status, and once ready its size and download_url',
    tag: 'Reports',
    permission: 'read',
    params: IdParams,
    responses: { 200: { description: 'The report', schema: Report }, ...ErrorResponses },
    handler: async ({ params }, { db, config }) => ({
      body: await getReport(db, params.id, config.BASE_URL),
    }),
  }),
  defineRoute({
    method: 'get',
    path: '/v1/reports/:id/download',
    operationId: 'downloadReport',
    summary:
      'The report file (text/csv, application/json or text/html) as an attachment; 409 with Retry-After while pending, 409 when failed',
    tag: 'Reports',
    permission: 'read',
    params: IdParams,
    responses: {
      200: { description: 'The report file, streamed', contentType: 'application/octet-stream' },
      304: { description: 'Not modified (If-None-Match or If-Modified-Since)' },
      ...ErrorResponses,
    },
    handler: async ({ params, ctx }, deps) => {
      const row = await findReadyReport(deps.db, params.id);
      const name = row.file_name.replace(/\.[a-z]+$/, '');
      const reply = await servePublishedFile(ctx, {
        path: reportFilePath(deps.config.DATA_DIR, row.id, row.format),
        contentType: row.content_type,
        disposition: attachmentDisposition(name, row.format, row.id),
        gzip: false,
      });
      // Ready, but its file is gone (removed by hand): nothing to serve.
      if (!reply) throw notFound('report file', row.id);
      // An HTML report opened from the API's origin runs no script and loads nothing.
      reply.headers = {
        ...reply.headers,
        'Content-Security-Policy':
          "default-src 'none'; style-src 'unsafe-inline'; img-src data:; sandbox",
        'X-Content-Type-Options': 'nosniff',
      };
      return reply;
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/v1/reports/:id',
    operationId: 'deleteReport',
    summary: 'Delete a report and its file (a generation under way is discarded)',
    tag: 'Reports',
    permission: 'write',
    params: IdParams,
    responses: { 204: { description: 'Deleted' }, ...ErrorResponses },
    handler: async ({ params }, deps) => {
      await deleteReport(deps.db, params.id, deps.config.DATA_DIR);
      return { status: 204 };
    },
  }),
];
