import { DOCUMENT_STATUSES } from '@kb/contracts';
import { z } from 'zod';

import type { DocumentStats } from './document-stats.service';

const counts = z.object({
  documents: z.number().int(),
  chunks: z.number().int(),
  byStatus: z.record(
    z.enum(DOCUMENT_STATUSES),
    z.object({ documents: z.number().int(), chunks: z.number().int() }),
  ),
});

/** Documents and chunks by status, in total and per knowledge base (`DocumentStats`). */
export const documentStatsSchema = z.object({
  scope: z.enum(['readable', 'all']),
  totals: counts,
  knowledgeBases: z.array(counts.extend({ id: z.string(), name: z.string() })),
});

// The view is a TypeScript interface; this line stops the schema drifting from it.
const documentStatsMatches: z.input<typeof documentStatsSchema> = {} as DocumentStats;
void documentStatsMatches;
