import {
  type DocumentUploaded,
  type PiiMode,
  type PiiSummary,
  strictestPiiMode,
} from '@kb/contracts';
import { PermanentError } from '@kb/kafka';
import { meter, withKnowledgeBase } from '@kb/observability';
import { detectPii, redact, summarize } from '@kb/pii';

import type { Extracted } from './extraction.model';

const findingsCounted = meter().createCounter('kb_pii_findings_total', {
  description:
    'Personal data and secrets found in parsed documents, by type and knowledge base (ADR 51)',
});

/** An extracted text after its knowledge bases' PII setting: what is chunked and stored. */
export interface Screened {
  text: string;
  pages: Extracted['pages'];
  /** The findings by type; undefined when the setting is `off` (nothing was looked for). */
  findings?: PiiSummary;
}

/** The setting that applies to a document: the strictest of its pipelines' (ADR 51). */
export const piiModeOf = (document: Pick<DocumentUploaded, 'pipelines'>): PiiMode =>
  strictestPiiMode(document.pipelines.map((pipeline) => pipeline.pii));

const described = (summary: PiiSummary): string =>
  Object.entries(summary)
    .map(([type, count]) => `${count} ${type}`)
    .join(', ');

/**
 * Applies a PII setting to extracted text (docs/adr/0051): `detect` counts, `redact` replaces
 * each finding with its placeholder (pages moved to the redacted offsets, so chunk offsets and
 * the stored text agree), `block` refuses a text with any finding as `pii_blocked`. Findings are
 * counted in `kb_pii_findings_total` under the document's knowledge bases; no value is logged.
 * `onFindings` runs before a block is thrown, so the document records what blocked it.
 */
export async function screenPii(
  mode: PiiMode,
  extracted: Pick<Extracted, 'text' | 'pages'>,
  knowledgeBaseIds: readonly string[],
  onFindings: (findings: PiiSummary) => Promise<void>,
): Promise<Screened> {
  const { text, pages } = extracted;
  if (mode === 'off') return { text, pages };
  const redaction = mode === 'redact' ? redact(text) : undefined;
  const findings = redaction?.summary ?? summarize(detectPii(text));
  for (const [type, count] of Object.entries(findings)) {
    findingsCounted.add(count, withKnowledgeBase({ type }, knowledgeBaseIds));
  }
  await onFindings(findings);
  if (mode === 'block' && Object.keys(findings).length > 0) {
    throw new PermanentError(
      'pii_blocked',
      `its knowledge base blocks personal data, and the text holds some: ${described(findings)}`,
    );
  }
  if (!redaction) return { text, pages, findings };
  return {
    text: redaction.text,
    pages: pages?.map((page) => ({
      ...page,
      start: redaction.toRedacted(page.start),
      end: redaction.toRedacted(page.end, { end: true }),
    })),
    findings,
  };
}
