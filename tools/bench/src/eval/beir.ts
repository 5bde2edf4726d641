import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

import { z } from 'zod';

const corpusLine = z.object({
  _id: z.coerce.string().min(1),
  title: z
    .string()
    .nullish()
    .transform((t) => t ?? ''),
  text: z
    .string()
    .nullish()
    .transform((t) => t ?? ''),
});
const queryLine = z.object({ _id: z.coerce.string().min(1), text: z.string() });

export type CorpusEntry = z.infer<typeof corpusLine>;
export type Query = z.infer<typeof queryLine>;
/** query id → document id → graded relevance (> 0 means relevant). */
export type Qrels = Map<string, Map<string, number>>;

export interface BeirDataset {
  corpus: CorpusEntry[];
  queries: Query[];
  qrels: Qrels;
  /** What was left out, counted, so nothing is dropped silently. */
  skipped: DatasetSkips;
}

export interface DatasetSkips {
  /** Corpus entries without text or title (the upload would refuse them: `empty_file`). */
  emptyDocuments: number;
  /** Judged queries whose text is missing or blank (they are not asked). */
  queriesWithoutText: number;
  /** Judgments naming a document id that is not in the corpus (kept: they still count as relevant). */
  unknownJudgedDocuments: number;
}

/** Reads a folder in BEIR layout: corpus.jsonl, queries.jsonl, qrels/test.tsv (header optional). */
export async function loadBeir(folder: string): Promise<BeirDataset> {
  const jsonl = async <T>(file: string, schema: z.ZodType<T>): Promise<T[]> =>
    (await readFile(join(folder, file), 'utf8'))
      .split('\n')
      .filter((line) => line.trim())
      .map((line, i) => {
        const parsed = schema.safeParse(JSON.parse(line));
        if (!parsed.success) throw new Error(`${file}:${i + 1}: ${parsed.error.message}`);
        return parsed.data;
      });
  const qrels = parseQrels(await readFile(join(folder, 'qrels', 'test.tsv'), 'utf8'));
  return prepareDataset(
    await jsonl('corpus.jsonl', corpusLine),
    await jsonl('queries.jsonl', queryLine),
    qrels,
  );
}

/** `query-id <tab> corpus-id <tab> score`, one per line; a first line that is not numeric is a header. */
export function parseQrels(tsv: string): Qrels {
  const qrels: Qrels = new Map();
  const lines = tsv.split('\n').filter((l) => l.trim());
  for (const [i, line] of lines.entries()) {
    const [queryId, docId, score] = line.trim().split('\t');
    if (i === 0 && Number.isNaN(Number(score))) continue; // header
    if (!queryId || !docId || score === undefined || Number.isNaN(Number(score)))
      throw new Error(`qrels/test.tsv:${i + 1}: expected 3 columns, the last a number`);
    let judged = qrels.get(queryId);
    if (!judged) qrels.set(queryId, (judged = new Map()));
    judged.set(docId, Number(score));
  }
  return qrels;
}

/**
 * Drops what cannot be evaluated and counts it: corpus entries with no text, judged queries with
 * no text (their judgments go too, so they do not count as zeros). Judgments of ids missing from
 * the corpus stay (as in BEIR's own scoring, a relevant document that cannot be found is a miss)
 * and are counted.
 */
export function prepareDataset(
  corpus: CorpusEntry[],
  allQueries: Query[],
  allQrels: Qrels,
): BeirDataset {
  const kept = corpus.filter((entry) => contentOf(entry).trim() !== '');
  const known = new Set(corpus.map((entry) => entry._id));
  const texts = new Map(allQueries.map((q) => [q._id, q.text.trim()]));
  const qrels: Qrels = new Map();
  let queriesWithoutText = 0;
  let unknownJudgedDocuments = 0;
  for (const [queryId, judged] of allQrels) {
    if (!texts.get(queryId)) {
      queriesWithoutText++;
      continue;
    }
    qrels.set(queryId, judged);
    for (const docId of judged.keys()) if (!known.has(docId)) unknownJudgedDocuments++;
  }
  return {
    corpus: kept,
    queries: allQueries.filter((q) => qrels.has(q._id)),
    qrels,
    skipped: {
      emptyDocuments: corpus.length - kept.length,
      queriesWithoutText,
      unknownJudgedDocuments,
    },
  };
}

/** The text a corpus entry is uploaded as. */
export const contentOf = (entry: { title: string; text: string }): string =>
  entry.title ? `${entry.title}\n\n${entry.text}` : entry.text;
