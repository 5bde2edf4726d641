import { type ChunkerConfig, chunkerConfigSchema } from '@kb/contracts';
import { z } from 'zod';

/** Documents tagged with any of `anyOf` belong to the knowledge base; `[]`, no rule. */
const tagRuleSchema = z
  .object({
    anyOf: z
      .array(
        z
          .string()
          .regex(
            /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/,
            'letters, digits, "_", ".", ":" or "-", at most 128',
          ),
      )
      .max(64),
  })
  .strict();

export const createKnowledgeBaseSchema = z
  .object({
    id: z
      .string()
      .regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, 'lower-case letters, digits, "_" or "-", at most 63'),
    name: z.string().trim().min(1).max(200),
    description: z.string().max(2000).default(''),
    /**
     * How its documents are chunked (recursive, sentence, paragraph, markdown or token); fixed
     * once created. Absent: the deployment's default chunker (CHUNK_SIZE, CHUNK_OVERLAP).
     */
    chunker: chunkerConfigSchema.optional(),
    embeddingModel: z.string().min(1).max(200).optional(),
    tagRule: tagRuleSchema.default({ anyOf: [] }),
  })
  .strict();
export type CreateKnowledgeBase = z.infer<typeof createKnowledgeBaseSchema>;

/** `chunker` and `embeddingModel` are accepted only to answer 409 when they differ. */
export const updateKnowledgeBaseSchema = z
  .object({
    name: z.string().trim().min(1).max(200).optional(),
    description: z.string().max(2000).optional(),
    chunker: z.unknown().optional(),
    embeddingModel: z.unknown().optional(),
    tagRule: tagRuleSchema.optional(),
  })
  .strict();
export type UpdateKnowledgeBase = z.infer<typeof updateKnowledgeBaseSchema>;

export interface KnowledgeBaseView {
  id: string;
  name: string;
  description: string;
  /** Fixed at creation: changing them means a new knowledge base. */
  chunker: ChunkerConfig;
  embeddingModel: string;
  /** The model's dimension, detected when the knowledge base was created. */
  embeddingDimension: number | null;
  /** Mutable: changing it adds and removes documents (their indexes update in place). */
  tagRule: { anyOf: string[] };
  createdAt: string;
  updatedAt: string;
}
