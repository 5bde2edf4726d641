import { DOCUMENT_STATUSES } from '@kb/contracts';
import { z } from 'zod';

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
