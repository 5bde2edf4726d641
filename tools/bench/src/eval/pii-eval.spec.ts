import { DEFAULT_PII_FIXTURE, evaluatePii, readLabelledSnippets } from './pii-eval';

// The floor of issue 39: precision and recall of at least 0.95 for every validated type, on the
// labelled set of libs/pii/test/fixtures (docs/adr/0051 reports the figures).
describe('PII detector on the labelled set', () => {
  it('holds at least 200 snippets, with positives and negatives', async () => {
    const snippets = await readLabelledSnippets(DEFAULT_PII_FIXTURE);
    expect(snippets.length).toBeGreaterThanOrEqual(200);
    expect(snippets.filter((s) => s.pii.length === 0).length).toBeGreaterThanOrEqual(50);
  });

  it('reaches precision and recall of 0.95 for each type', async () => {
    const scores = evaluatePii(await readLabelledSnippets(DEFAULT_PII_FIXTURE));
    for (const score of scores) {
      expect(score.support).toBeGreaterThanOrEqual(10);
      expect({
        type: score.type,
        precision: score.precision >= 0.95,
        recall: score.recall >= 0.95,
      }).toEqual({
        type: score.type,
        precision: true,
        recall: true,
      });
    }
  });

  it('scores a miss and a false alarm as such', () => {
    const [email] = evaluatePii([
      { text: 'mail a@example.com', pii: [{ type: 'email', value: 'a@example.com' }] },
      { text: 'no label b@example.com', pii: [] },
      {
        text: 'missed jane at example dot com',
        pii: [{ type: 'email', value: 'jane at example dot com' }],
      },
    ]);
    expect(email).toMatchObject({
      support: 2,
      truePositives: 1,
      falsePositives: 1,
      falseNegatives: 1,
    });
  });
});
