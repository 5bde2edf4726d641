import { ocrReportSchema } from '@kb/contracts';
import { z } from 'zod';

import type { DocumentText } from './document-content.service';

/** A window of a document's extracted text as the API shows it (`DocumentText`). */
export const documentTextSchema = z.object({
  documentId: z.uuid(),
  version: z.number().int(),
  title: z.string(),
  contentType: z.string(),
  format: z
    .string()
    .describe(
      'How the parser read it: text, markdown, html, csv, tsv, json, xml, code, pdf, docx, xlsx, pptx, odt, ods, odp, epub, rtf, eml, image.',
    ),
  length: z
    .number()
    .int()
    .describe('The whole text, in UTF-16 code units (the unit of hit offsets).'),
  offset: z.number().int(),
  text: z.string(),
  nextOffset: z
    .number()
    .int()
    .nullable()
    .describe('Where the next window starts; null at the end.'),
  pages: z.array(
    z.object({ page: z.number().int(), start: z.number().int(), end: z.number().int() }),
  ),
  headings: z.array(
    z.object({ start: z.number().int(), level: z.number().int(), text: z.string() }),
  ),
  ocr: ocrReportSchema
    .optional()
    .describe(
      'When OCR read some pages (images, scanned PDF pages): the languages, the confidence threshold and per page its confidence, characters and whether it was flagged (its text then left out).',
    ),
});

// The view is a TypeScript interface; this line stops the schema drifting from it.
const documentTextMatches: z.input<typeof documentTextSchema> = {} as DocumentText;
void documentTextMatches;
