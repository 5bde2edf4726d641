import {
  baseConfigSchema,
  embeddingConfigSchema,
  env,
  httpConfigSchema,
  kafkaConfigSchema,
  loadConfig,
  s3ConfigSchema,
} from '@kb/config';
import { z } from 'zod';

import type { ExtractionLimits } from '../parsing/extraction.model';

export const parserConfigSchema = baseConfigSchema
  .extend(httpConfigSchema(3002).shape)
  .extend(kafkaConfigSchema.shape)
  .extend(s3ConfigSchema.shape)
  .extend({
    KAFKA_GROUP_ID: z.string().default('parser-service'),
    // Text extraction runs in worker threads, each bounded in memory and time (docs/adr/0016).
    /** Worker threads extracting at once; a document waits for a free one before its clock starts. */
    PARSER_WORKERS: z.coerce.number().int().min(1).max(16).default(2),
    /** V8 heap (old generation) of one worker; past it the worker dies and the document is `too_large`. */
    PARSER_WORKER_MAX_MEMORY_MB: z.coerce.number().int().min(32).default(256),
    /** Wall-clock time one extraction may take; past it the worker is stopped and the document is `timeout`. */
    PARSER_TIMEOUT_MS: env.positiveInt(60_000),
    /**
     * Bytes of an original the parser reads into memory; past it the document is `too_large`
     * before anything is buffered. Keep it at document-service's MAX_UPLOAD_BYTES.
     */
    PARSER_MAX_INPUT_BYTES: env.positiveInt(100 * 1024 * 1024),
    /**
     * A mail's attachments read as documents of their own (docs/adr/0048); later ones are
     * skipped `too_many`. 0: attachments are only named.
     */
    PARSER_MAX_ATTACHMENTS: z.coerce.number().int().min(0).max(1000).default(20),
    /** Characters of extracted text one document may have (`too_large` past it). */
    PARSER_MAX_TEXT_CHARS: env.positiveInt(20_000_000),
    /** Entries a ZIP container (DOCX) may hold. */
    PARSER_ZIP_MAX_ENTRIES: env.positiveInt(10_000),
    /** What a ZIP container's entries may inflate to, counted while inflating. */
    PARSER_ZIP_MAX_INFLATED_MB: env.positiveInt(64),
    // OCR of images and of PDF pages without a text layer, in a pool of its own (docs/adr/0050).
    /** Threads recognising pages at once (each also runs tesseract's WebAssembly in a thread). */
    OCR_WORKERS: z.coerce.number().int().min(1).max(16).default(1),
    /** V8 heap (old generation) of one OCR thread; past it the document is `too_large`. */
    OCR_WORKER_MAX_MEMORY_MB: z.coerce.number().int().min(32).default(256),
    /** Wall-clock time OCR may take on one page; past it the document is `timeout`. */
    OCR_PAGE_TIMEOUT_MS: env.positiveInt(30_000),
    /** Pages of one document OCR reads (image pages, PDF pages without text); `too_large` past it. */
    OCR_MAX_PAGES: env.positiveInt(50),
    /** Pixels of one image or rendered page; `too_large` past it, checked before decoding. */
    OCR_MAX_IMAGE_PIXELS: env.positiveInt(40_000_000),
    /** Mean word confidence (0-100) under which an OCR page is flagged and its text left out. */
    OCR_MIN_CONFIDENCE: z.coerce.number().min(0).max(100).default(60),
    /** Languages OCR reads when a knowledge base names none: `+`-separated tesseract codes. */
    OCR_LANGUAGES: z
      .string()
      .default('eng')
      .transform((value) => value.split('+').filter(Boolean))
      .pipe(z.array(z.string().regex(/^[a-z]{3}(_[a-z]+)?$/)).min(1)),
  })
  // The embedding model's tokenizer counts chunk tokens; without its folder, a word estimate.
  .extend(embeddingConfigSchema.pick({ EMBEDDING_MODEL_DIR: true, EMBEDDING_MODEL: true }).shape);

export type ParserConfig = z.infer<typeof parserConfigSchema>;
export const PARSER_CONFIG = Symbol('PARSER_CONFIG');
export const loadParserConfig = (): ParserConfig => loadConfig(parserConfigSchema);

/** The per-document bounds the extraction enforces, from the config. */
export const extractionLimitsOf = (config: ParserConfig): ExtractionLimits => ({
  maxZipEntries: config.PARSER_ZIP_MAX_ENTRIES,
  maxInflatedBytes: config.PARSER_ZIP_MAX_INFLATED_MB * 1024 * 1024,
  maxTextChars: config.PARSER_MAX_TEXT_CHARS,
  maxImagePixels: config.OCR_MAX_IMAGE_PIXELS,
  maxOcrPages: config.OCR_MAX_PAGES,
});
