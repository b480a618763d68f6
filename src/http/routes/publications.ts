import { PublicationList } from '../../domain/publications/schemas.js';
import { listPublications } from '../../domain/publications/publications.js';
import { defineRoute } from '../route.js';
import { PublicationListQueryString } from '../schemas/publications.js';
import { ErrorResponses } from './shared.js';

export const publicationRoutes = [
  defineRoute({
    method: 'get',
    path: '/v1/publications',
    operationId: 'listPublications',
    summary:
      'List the uploads of the published registry to object storage (PUBLISH_TARGET), newest first',
    tag: 'Publications',
    permission: 'read',
    query: PublicationListQueryString,
    responses: {
      200: { description: 'A page of publications', schema: PublicationList },
      ...ErrorResponses,
    },
    handler: async ({ query }, { db }) => {
      const { limit, offset, ...filter } = query;
      return { body: await listPublications(db, filter, { limit, offset }) };
    },
  }),
];
