import {
  Publication,
  PublicationList,
  PublicationListQuery,
} from '../../domain/publications/schemas.js';
import { doc, docFields } from './registry.js';
import { pageQuery } from './shared.js';

/** The publication list's query string, with numbers read from text. */
export const PublicationListQueryString = PublicationListQuery.extend(pageQuery);

docFields(
  Publication,
  {
    target: 'The bucket, key prefix and endpoint (PUBLISH_TARGET without credentials)',
    trigger: 'pipeline (a pipeline run uploaded what it published) or publish (the CLI)',
    status:
      'running, then succeeded or failed (error says why; the next run uploads what is missing); interrupted when its process died',
    uploaded: 'Objects uploaded (only changed objects are)',
    skipped: 'Objects already in the bucket with the same content',
    deleted: 'Objects deleted (those the tree no longer holds, after PUBLISH_DELETE_GRACE)',
    held: 'Deletions held back: more than PUBLISH_MAX_DELETES or half the bucket (agentshelf publish --force)',
    bytes: 'Bytes uploaded',
    error: 'Why the upload failed, or a note on held deletions',
    purge_status:
      'The CDN purge of the changed URLs (CDN_PURGE): pending (retried), succeeded or failed; null when none was asked',
    purge_attempts: 'Purge attempts made',
    purge_error: 'Why the last purge attempt failed (a failed purge never fails the publication)',
    finished_at: 'When the upload ended',
  },
  { id: 'Publication', description: 'An upload of the published registry to object storage' },
);
doc(PublicationList, {
  id: 'PublicationList',
  description: 'A page of publications, newest first',
});
