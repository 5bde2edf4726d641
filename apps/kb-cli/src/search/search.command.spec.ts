import { runCommand, stubApi } from '../testing/run-command';
import { registerContextCommand } from './context.command';
import { registerSearchCommand } from './search.command';

const hit = (i: number, text: string) => ({
  documentId: `doc-${i}`,
  chunkIndex: i,
  title: `Title ${i}`,
  text,
  score: 1 / (i + 1),
  isMatch: true,
});

describe('kb search', () => {
  let api: Awaited<ReturnType<typeof stubApi>>;

  beforeAll(async () => {
    api = await stubApi(({ url }) =>
      url === '/v1/search'
        ? {
            status: 200,
            body: {
              hits: [hit(0, 'Tests run\n with   npm test.'), hit(1, 'x'.repeat(300))],
              total: 7,
              totalRelation: 'gte',
              mode: 'hybrid',
              tookMs: 12.4,
            },
          }
        : { status: 400, body: { error: { code: 'invalid_argument', message: 'topK too big' } } },
    );
  });
  afterAll(() => api.close());
  beforeEach(() => (api.seen.length = 0));

  it("posts the query, the caller's token and the options to POST /v1/search", async () => {
    await runCommand(registerSearchCommand, [
      'search',
      'how do I',
      'run the tests',
      '--query-url',
      api.url,
      '--token',
      't0k',
      '--kb',
      'eng, docs',
      '--mode',
      'lexical',
      '--limit',
      '3',
    ]);
    expect(api.seen).toEqual([
      {
        method: 'POST',
        url: '/v1/search',
        authorization: 'Bearer t0k',
        body: {
          query: 'how do I run the tests',
          topK: 3,
          mode: 'lexical',
          knowledgeBaseIds: ['eng', 'docs'],
        },
      },
    ]);
  });

  it('prints a ranked list with one line of text per hit', async () => {
    const { stdout } = await runCommand(registerSearchCommand, [
      'search',
      'tests',
      '--query-url',
      api.url,
      '--token',
      't',
    ]);
    const lines = stdout.split('\n');
    expect(lines[0]).toBe('2 of ≥7 hits (hybrid, 12 ms)');
    expect(lines).toContain('1. 1.000  Title 0  [doc-0 #0]');
    expect(lines).toContain('   Tests run with npm test.');
    // Long texts are cut to one line.
    expect(lines.find((l) => l.startsWith('   xxx'))).toHaveLength(3 + 200);
  });

  it("prints the API's answer as it is with --json", async () => {
    const { stdout } = await runCommand(registerSearchCommand, [
      'search',
      'tests',
      '--json',
      '--query-url',
      api.url,
      '--token',
      't',
    ]);
    expect(JSON.parse(stdout)).toMatchObject({ total: 7, hits: [{ documentId: 'doc-0' }, {}] });
  });

  it('needs a token, and reports an API error with its code', async () => {
    const saved = process.env['KB_TOKEN'];
    delete process.env['KB_TOKEN'];
    await expect(
      runCommand(registerSearchCommand, ['search', 'q', '--query-url', api.url]),
    ).rejects.toThrow('a token is required');
    process.env['KB_TOKEN'] = saved;
    await expect(
      runCommand(registerContextCommand, [
        'context',
        'q',
        '--query-url',
        `${api.url}/x`,
        '--token',
        't',
      ]),
    ).rejects.toThrow('400 invalid_argument: topK too big');
  });
});

describe('kb context', () => {
  it('posts the question and budget to POST /v1/context and prints the passages by citation', async () => {
    const api = await stubApi(() => ({
      status: 200,
      body: {
        passages: [
          { citation: 1, documentId: 'd1', title: 'Runbook', text: 'Restart the\nbroker.' },
        ],
        tokensUsed: 5,
        tokenBudget: 500,
        truncated: false,
        standaloneQuery: 'restart',
        degraded: false,
      },
    }));
    try {
      const { stdout } = await runCommand(registerContextCommand, [
        'context',
        'how to restart',
        '--budget',
        '500',
        '--query-url',
        api.url,
        '--token',
        't',
      ]);
      expect(api.seen[0]).toMatchObject({
        url: '/v1/context',
        body: { question: 'how to restart', tokenBudget: 500, mode: 'hybrid' },
      });
      expect(stdout).toBe(
        '1 passages, 5 of 500 tokens\n\n[1] Runbook  [d1]\n   Restart the broker.\n',
      );
    } finally {
      await api.close();
    }
  });
});
