import { z } from 'zod';

/**
 * The text parser-service extracted from one document version, stored once per version beside
 * its chunks. Every offset here, and every chunk's `start`/`end` in search hits and context
 * citations, counts UTF-16 code units of `text`: `text.slice(hit.start, hit.end)` is the hit.
 * document-service serves it as `GET /v1/documents/{id}/text`.
 */
export const extractedTextSchema = z.object({
  documentId: z.uuid(),
  version: z.number().int().positive(),
  /** The format the parser read the content as: text, markdown, html, csv, json, code, pdf, docx. */
  format: z.string(),
  text: z.string(),
  /** Where each page starts and ends (PDF only; empty otherwise). */
  pages: z.array(
    z.object({
      page: z.number().int().positive(),
      start: z.number().int().nonnegative(),
      end: z.number().int().nonnegative(),
    }),
  ),
  /** Markdown-style headings of the text (Markdown, HTML and DOCX), in order. */
  headings: z.array(
    z.object({
      start: z.number().int().nonnegative(),
      level: z.number().int().min(1).max(6),
      text: z.string(),
    }),
  ),
});
export type ExtractedText = z.infer<typeof extractedTextSchema>;

/** Where the extracted text of a document version is stored (beside its chunks). */
export const extractedTextKey = (tenantId: string, documentId: string, version: number): string =>
  `derived/${tenantId}/${documentId}/v${version}/text.json`;
