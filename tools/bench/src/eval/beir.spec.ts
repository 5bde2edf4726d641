import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { loadBeir, parseQrels } from './beir';

describe('BEIR loading', () => {
  it('skips empty documents and queries without text with counts, keeps unknown judged ids counted', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'beir-'));
    await mkdir(join(folder, 'qrels'));
    await writeFile(
      join(folder, 'corpus.jsonl'),
      [
        { _id: 'd1', title: 'One', text: 'first text' },
        { _id: 'd2', title: '', text: '' },
        { _id: 'd3', title: '', text: '   \n ' },
        { _id: 4, text: 'numeric id, no title' },
        { _id: 'd5', title: null, text: null },
      ]
        .map((l) => JSON.stringify(l))
        .join('\n'),
    );
    await writeFile(
      join(folder, 'queries.jsonl'),
      [
        { _id: 'q1', text: 'what is one' },
        { _id: 'q2', text: '  ' },
        { _id: 'q3', text: 'not judged' },
      ]
        .map((l) => JSON.stringify(l))
        .join('\n'),
    );
    await writeFile(
      join(folder, 'qrels', 'test.tsv'),
      'query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\tgone\t1\nq2\td1\t1\nq9\td1\t1\n',
    );
    const dataset = await loadBeir(folder);
    expect(dataset.corpus.map((e) => e._id)).toEqual(['d1', '4']);
    expect(dataset.queries.map((q) => q._id)).toEqual(['q1']);
    expect([...dataset.qrels.keys()]).toEqual(['q1']);
    expect(dataset.skipped).toEqual({
      emptyDocuments: 3,
      // q2 is blank; q9 is judged but has no query at all
      queriesWithoutText: 2,
      unknownJudgedDocuments: 1,
    });
  });

  it('reads qrels with or without a header and refuses a malformed line with its number', () => {
    expect(parseQrels('q1\td1\t2\n').get('q1')?.get('d1')).toBe(2);
    expect(() => parseQrels('query-id\tcorpus-id\tscore\nq1\td1\n')).toThrow(
      'qrels/test.tsv:2: expected 3 columns',
    );
  });
});
