// What `kb-tools bench formats` (tools/bench) times: extraction in process, and OCR in process
// and in its pool. Not loaded by the service.
export { OcrPool } from './ocr/ocr.pool';
export { default as recognizePage, stopRecognizer } from './ocr/ocr.worker';
export { OcrTextExtractor } from './ocr/ocr-text.extractor';
export type { ExtractionLimits } from './parsing/extraction.model';
export { extractText } from './parsing/text.extractor';
export { WorkerTextExtractor } from './parsing/worker.extractor';
