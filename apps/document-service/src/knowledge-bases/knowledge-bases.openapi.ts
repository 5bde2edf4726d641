import { pathParameter } from '@kb/http';
import { z } from 'zod';

/** The `{id}` of the knowledge bases' routes, for their `@ApiOperation`s. */
export const knowledgeBaseIdParameter = pathParameter('id', z.string(), 'The knowledge base id.');
