import { randomBytes, randomUUID } from 'node:crypto';

import { KbClient, type KbEndpoints, localToken } from '@kb/kb-cli/api';

import { loadBeir } from '../eval/beir';
import { peakRssMb } from './ingest.bench';

export interface LargeBenchOptions extends Omit<KbEndpoints, 'token' | 'grpcAddress'> {
  /** BEIR folder whose corpus supplies the document's prose. */
  dataset: string;
  sizeMb: number;
  /** Characters of prose in the document; the rest is embedded image data. */
  textChars: number;
  /** Per-service memory bounds in MiB; by default the Helm chart's limits (MEMORY_LIMITS_MB). */
  boundMb?: Record<string, number>;
  log: (line: string) => void;
}

/**
 * The memory limits the Helm chart gives each service's pods (helm/knowledge-base/values.yaml,
 * `services.<name>.resources.limits.memory`; a unit test keeps the two equal): the bound a
 * service must stay under, or Kubernetes kills it.
 */
export const MEMORY_LIMITS_MB: Record<string, number> = {
  'document-service': 512,
  'parser-service': 1280,
  'embedding-service': 1024,
  'indexing-service': 512,
  'query-service': 1024,
  'acl-service': 256,
  'webhook-service': 256,
};

/**
 * A saved web page as browsers write them: prose with images inlined as base64 `data:` URIs, so
 * the file is large while its text is a few hundred kilobytes. Every byte still travels through
 * the upload, S3 and the parser; only the text is chunked and embedded.
 */
export function largeHtmlPage(paragraphs: string[], sizeBytes: number, textChars: number): Buffer {
  const head = '<!doctype html><html><head><title>Large document</title></head><body>\n';
  const tail = '</body></html>\n';
  const prose: string[] = [];
  let chars = 0;
  for (let i = 0; chars < textChars; i++) {
    const paragraph = paragraphs[i % paragraphs.length] ?? '';
    if (i % 25 === 0) prose.push(`<h2>Section ${i / 25 + 1}</h2>\n`);
    prose.push(`<p>${escapeHtml(paragraph)}</p>\n`);
    chars += paragraph.length;
  }
  const textBytes = Buffer.byteLength(head + prose.join('') + tail);
  // One image before every 50th paragraph, the first included.
  const images = Math.max(1, Math.ceil(prose.length / 50));
  const perImage = Math.max(0, Math.floor((sizeBytes - textBytes) / images));
  const parts: Buffer[] = [Buffer.from(head)];
  for (let i = 0; i < prose.length; i++) {
    parts.push(Buffer.from(prose[i] ?? ''));
    if (i % 50 === 0) {
      const data = randomBytes(Math.floor((perImage * 3) / 4)).toString('base64');
      parts.push(Buffer.from(`<img alt="figure" src="data:image/jpeg;base64,${data}">\n`));
    }
  }
  parts.push(Buffer.from(tail));
  return Buffer.concat(parts);
}

const escapeHtml = (text: string): string =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/**
 * Ingests one large document through REST in a fresh tenant, waits until it is indexed, and
 * reports every service's peak resident memory against the stated bound.
 */
export async function runLargeBench(options: LargeBenchOptions): Promise<object> {
  const dataset = await loadBeir(options.dataset);
  const tenant = `large-${randomUUID().slice(0, 8)}`;
  // Text of this run's own, so the embedding cache cannot answer for an earlier run's chunks.
  const page = largeHtmlPage(
    dataset.corpus.map((entry) => `${entry.text} (${tenant})`),
    options.sizeMb * 1_000_000,
    options.textChars,
  );
  const client = new KbClient({
    ...options,
    grpcAddress: '',
    token: await localToken({ tenant, user: 'bench-admin', roles: ['admin'] }),
  });
  try {
    const started = performance.now();
    const uploaded = await client.upload('large-page.html', page, { title: 'Large document' });
    const uploadSeconds = (performance.now() - started) / 1000;
    options.log(`uploaded ${(page.length / 1e6).toFixed(1)} MB in ${uploadSeconds.toFixed(1)} s`);
    let document = await client.getDocument(uploaded.id);
    while (document.status !== 'indexed') {
      if (document.status === 'failed') {
        throw new Error(`the large document failed: ${JSON.stringify(document.failure)}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 1000));
      document = await client.getDocument(uploaded.id);
    }
    const seconds = (performance.now() - started) / 1000;
    const peak = await peakRssMb();
    const bounds = options.boundMb ?? MEMORY_LIMITS_MB;
    const round = (x: number) => Math.round(x * 10) / 10;
    options.log(`indexed ${document.chunkCount} chunks in ${round(seconds)} s`);
    return {
      large: {
        size_mb: round(page.length / 1e6),
        chunks: document.chunkCount,
        upload_s: round(uploadSeconds),
        indexed_s: round(seconds),
        bound_mb: bounds,
        within_bound: Object.entries(peak).every(
          ([service, mb]) => mb <= (bounds[service] ?? Number.POSITIVE_INFINITY),
        ),
        peak_rss_mb: peak,
      },
    };
  } finally {
    client.close();
  }
}
