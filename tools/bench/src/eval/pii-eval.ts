import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';

import { PII_TYPES, type PiiType } from '@kb/contracts';
import { detectPii, redact } from '@kb/pii';

/** One labelled snippet: its text and every piece of personal data or secret it holds. */
export interface LabelledSnippet {
  text: string;
  pii: Array<{ type: PiiType; value: string }>;
}

export interface TypeScore {
  type: PiiType;
  /** Labelled values of the type. */
  support: number;
  truePositives: number;
  falsePositives: number;
  falseNegatives: number;
  precision: number;
  recall: number;
}

/** The labelled set the project built (docs/adr/0051): positives and hard negatives per type. */
export const DEFAULT_PII_FIXTURE = resolve(
  __dirname,
  '../../../../libs/pii/test/fixtures/pii-labelled.jsonl',
);

export async function readLabelledSnippets(path: string): Promise<LabelledSnippet[]> {
  const lines = (await readFile(path, 'utf8')).split('\n').filter((line) => line.trim() !== '');
  return lines.map((line) => JSON.parse(line) as LabelledSnippet);
}

const ratio = (numerator: number, denominator: number): number =>
  denominator === 0 ? 1 : Math.round((numerator / denominator) * 1000) / 1000;

/**
 * Precision and recall of `detectPii` per type. A finding is a true positive when it overlaps a
 * labelled value of its own type (each label matched once); any other finding is a false
 * positive of its type, and a label no finding matched a false negative.
 */
export function evaluatePii(snippets: LabelledSnippet[]): TypeScore[] {
  const counts = new Map(PII_TYPES.map((type) => [type, { support: 0, tp: 0, fp: 0, fn: 0 }]));
  for (const { text, pii } of snippets) {
    const labels = pii.map(({ type, value }) => {
      const start = text.indexOf(value);
      return { type, start, end: start + value.length, matched: false };
    });
    for (const finding of detectPii(text)) {
      const label = labels.find(
        (l) =>
          !l.matched && l.type === finding.type && l.start < finding.end && finding.start < l.end,
      );
      if (label) label.matched = true;
      counts.get(finding.type)![label ? 'tp' : 'fp']++;
    }
    for (const label of labels) {
      const count = counts.get(label.type)!;
      count.support++;
      if (!label.matched) count.fn++;
    }
  }
  return PII_TYPES.map((type) => {
    const { support, tp, fp, fn } = counts.get(type)!;
    return {
      type,
      support,
      truePositives: tp,
      falsePositives: fp,
      falseNegatives: fn,
      precision: ratio(tp, tp + fp),
      recall: ratio(tp, tp + fn),
    };
  });
}

/** Redaction throughput over `texts`, in MB of UTF-8 per second, best of `rounds` passes. */
export function redactionThroughput(
  texts: string[],
  rounds = 3,
): { megabytes: number; seconds: number; mbPerSecond: number; findings: number } {
  const megabytes = texts.reduce((sum, t) => sum + Buffer.byteLength(t), 0) / 1e6;
  let best = Number.POSITIVE_INFINITY;
  let findings = 0;
  for (let round = 0; round < rounds; round++) {
    const started = process.hrtime.bigint();
    findings = 0;
    for (const text of texts) findings += redact(text).findings.length;
    best = Math.min(best, Number(process.hrtime.bigint() - started) / 1e9);
  }
  return {
    megabytes: Math.round(megabytes * 1000) / 1000,
    seconds: Math.round(best * 1000) / 1000,
    mbPerSecond: Math.round((megabytes / best) * 100) / 100,
    findings,
  };
}
