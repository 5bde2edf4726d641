import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

import { z } from 'zod';

const corpusLine = z.object({
  _id: z.string().min(1),
  title: z.string().default(''),
  text: z.string(),
});
const queryLine = z.object({ _id: z.string().min(1), text: z.string().min(1) });

export type CorpusEntry = z.infer<typeof corpusLine>;
export type Query = z.infer<typeof queryLine>;
/** query id → document id → graded relevance (> 0 means relevant). */
export type Qrels = Map<string, Map<string, number>>;

export interface BeirDataset {
  corpus: CorpusEntry[];
  queries: Query[];
  qrels: Qrels;
}

/** Reads a folder in BEIR layout: corpus.jsonl, queries.jsonl, qrels/test.tsv (with a header). */
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
  const qrels: Qrels = new Map();
  const lines = (await readFile(join(folder, 'qrels', 'test.tsv'), 'utf8'))
    .split('\n')
    .filter((l) => l.trim());
  for (const [i, line] of lines.entries()) {
    const [queryId, docId, score] = line.split('\t');
    if (i === 0 && Number.isNaN(Number(score))) continue; // header
    if (!queryId || !docId || score === undefined)
      throw new Error(`qrels/test.tsv:${i + 1}: expected 3 columns`);
    let judged = qrels.get(queryId);
    if (!judged) qrels.set(queryId, (judged = new Map()));
    judged.set(docId, Number(score));
  }
  const queries = (await jsonl('queries.jsonl', queryLine)).filter((q) => qrels.has(q._id));
  return { corpus: await jsonl('corpus.jsonl', corpusLine), queries, qrels };
}
