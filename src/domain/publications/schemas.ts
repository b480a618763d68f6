import { z } from 'zod';
import { pageFields } from '../pagination.js';
import { Pagination } from '../products/schemas.js';

export const PUBLICATION_STATUSES = ['running', 'succeeded', 'failed', 'interrupted'] as const;
export const PublicationStatus = z.enum(PUBLICATION_STATUSES);
export const PURGE_STATUSES = ['pending', 'succeeded', 'failed'] as const;
export const PurgeStatus = z.enum(PURGE_STATUSES);

export const PublicationListQuery = z.strictObject({
  status: PublicationStatus.optional(),
  ...pageFields,
});
export type PublicationListQuery = z.infer<typeof PublicationListQuery>;

export const Publication = z.object({
  id: z.string(),
  target: z.string(),
  trigger: z.string(),
  status: PublicationStatus,
  uploaded: z.int(),
  skipped: z.int(),
  deleted: z.int(),
  held: z.int(),
  bytes: z.int(),
  error: z.string().nullable(),
  purge_status: PurgeStatus.nullable(),
  purge_attempts: z.int(),
  purge_error: z.string().nullable(),
  started_at: z.string(),
  finished_at: z.string().nullable(),
});
export type Publication = z.infer<typeof Publication>;

export const PublicationList = z.object({
  publications: z.array(Publication),
  pagination: Pagination,
});
