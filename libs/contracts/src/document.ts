import { z } from 'zod';

import { FILTER_LIMITS } from './filter/filter';

/** Document metadata as uploads accept it: flat, with keys and values the filter language can reach. */
export const documentMetadataSchema = z
  .record(
    z
      .string()
      .regex(
        FILTER_LIMITS.metadataKey,
        'a metadata key starts with a letter and holds up to 64 letters, digits, "_" or "-"',
      ),
    z.union(
      [
        z.string().max(FILTER_LIMITS.stringLength * 8),
        z.number().finite(),
        z.boolean(),
        z.array(z.string().max(FILTER_LIMITS.stringLength)).max(FILTER_LIMITS.listValues),
      ],
      { error: 'a metadata value is a string, a finite number, a boolean or a list of strings' },
    ),
  )
  .refine((m) => Object.keys(m).length <= 64, 'at most 64 metadata keys');

/** What every chunk of a document carries into the indexes, beside its text and vector. */
export const documentAttributesSchema = z.object({
  knowledgeBaseIds: z.array(z.string()).default([]),
  tags: z.array(z.string()).default([]),
  metadata: documentMetadataSchema.default({}),
  /** Milliseconds since the epoch. */
  uploadedAt: z.number().int().nonnegative().default(0),
  /** Who may read the document (`u:`, `g:`, `r:` principals or `t:*`); empty means nobody but admins. */
  principals: z.array(z.string()).default([]),
});
export type DocumentMetadata = z.infer<typeof documentMetadataSchema>;
export type DocumentAttributes = z.infer<typeof documentAttributesSchema>;
/** The attributes a document's owner edits after upload (ACLs and upload time change otherwise). */
export type EditableAttributes = Pick<DocumentAttributes, 'knowledgeBaseIds' | 'tags' | 'metadata'>;
