/**
 * PII at ingest (issue 39 item 3, docs/adr/0051): a knowledge base's `pii` setting decides what
 * the parser does with personal data and secrets in its documents' text. `redact` replaces each
 * value by a placeholder before chunking and embedding, so neither index nor the stored text
 * holds it; `detect` counts findings on the document and in `kb_pii_findings_total`; `block`
 * fails the document with `pii_blocked`.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

import { useSuite } from '../support/suite';
import { waitFor } from '../support/wait';

jest.setTimeout(240_000);

const EMAIL = 'margot.lindqvist@example.org';
const CARD = '4539 1488 0343 6467';
const LETTER = [
  '# Refund request',
  '',
  `The customer ${EMAIL} asked for a refund of the annual lighthouse subscription. ` +
    `The refund goes back to card ${CARD} within five working days.`,
  '',
  'The harbour office keeps the signed form with the lighthouse keeper.',
].join('\n');

describe('PII detection and redaction at ingest', () => {
  const suite = useSuite('pii', 8100);

  const createKnowledgeBase = async (id: string, pii: string) => {
    const response = await fetch(`${suite.documentUrl}/v1/knowledge-bases`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(await suite.auth()) },
      body: JSON.stringify({ id, name: id, pii }),
    });
    expect(response.status).toBe(201);
    expect(((await response.json()) as { pii: string }).pii).toBe(pii);
  };

  const uploadInto = async (knowledgeBaseId: string, filename: string) => {
    // Distinct content each time: the same bytes again would be the same document.
    const body = `${LETTER}\n\nFiled under ${knowledgeBaseId}.`;
    const response = await suite.upload(filename, body, 'text/markdown', suite.tenant, {
      knowledgeBaseIds: [knowledgeBaseId],
    });
    expect(response.status).toBe(202);
    return ((await response.json()) as { id: string }).id;
  };

  const settled = (id: string) =>
    waitFor(
      () => suite.getDocument(id),
      (d) => d.status === 'indexed' || d.status === 'failed',
      90_000,
    );

  beforeAll(async () => {
    await createKnowledgeBase('redacted', 'redact');
    await createKnowledgeBase('audited', 'detect');
    // Through the CLI, as a knowledge manager would.
    const cli = await promisify(execFile)(
      process.execPath,
      ['apps/kb-cli/dist/main.js', 'kb', 'create', 'guarded', '--pii', 'block', '--json'],
      { env: { ...process.env, KB_TOKEN: suite.token, KB_DOCUMENTS_URL: suite.documentUrl } },
    );
    expect(JSON.parse(cli.stdout)).toMatchObject({ id: 'guarded', pii: 'block' });
  });

  it('redacts before chunking: search for the address finds nothing, chunks show [EMAIL]', async () => {
    const id = await uploadInto('redacted', 'refund-redacted.md');
    const document = await settled(id);
    expect(document).toMatchObject({ status: 'indexed', pii: { email: 1, card: 1 } });

    const byTopic = await suite.search({
      query: 'refund lighthouse subscription',
      knowledgeBaseIds: ['redacted'],
      mode: 'lexical',
    });
    const hit = byTopic.hits.find((h) => h.documentId === id);
    expect(hit?.text).toContain('[EMAIL]');
    expect(hit?.text).toContain('[CARD]');
    expect(JSON.stringify(byTopic)).not.toContain(EMAIL);
    expect(JSON.stringify(byTopic)).not.toContain('4539');

    for (const mode of ['lexical', 'hybrid'] as const) {
      const byValue = await suite.search({ query: EMAIL, knowledgeBaseIds: ['redacted'], mode });
      expect(JSON.stringify(byValue)).not.toContain(EMAIL);
      if (mode === 'lexical') expect(byValue.hits).toEqual([]);
    }

    const context = (await (
      await fetch(`${suite.queryUrl}/v1/context`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(await suite.auth()) },
        body: JSON.stringify({
          question: 'Where does the lighthouse subscription refund go?',
          knowledgeBaseIds: ['redacted'],
          tokenBudget: 400,
        }),
      })
    ).json()) as { passages: Array<{ documentId: string; text: string }> };
    const passage = context.passages.find((p) => p.documentId === id);
    expect(passage?.text).toContain('[EMAIL]');
    expect(JSON.stringify(context)).not.toContain(EMAIL);

    // The stored text, which chunk offsets point into, is the redacted one.
    const text = (await (
      await fetch(`${suite.documentUrl}/v1/documents/${id}/text`, { headers: await suite.auth() })
    ).json()) as { text: string };
    expect(text.text).toContain('The customer [EMAIL] asked');
    expect(text.text).not.toContain(EMAIL);
  });

  it('detects: the document is indexed as uploaded and counts its findings', async () => {
    const id = await uploadInto('audited', 'refund-audited.md');
    expect(await settled(id)).toMatchObject({ status: 'indexed', pii: { email: 1, card: 1 } });
    const hits = await suite.search({
      query: EMAIL,
      knowledgeBaseIds: ['audited'],
      mode: 'lexical',
    });
    expect(hits.hits.some((h) => h.documentId === id && h.text.includes(EMAIL))).toBe(true);

    const parserMetrics = `http://127.0.0.1:${suite.ports['parser-service']!.port}/metrics`;
    const metrics = await (await fetch(parserMetrics)).text();
    expect(metrics).toMatch(/kb_pii_findings_total\{[^}]*knowledge_base="audited"[^}]*\} 1/);
    expect(metrics).toMatch(/kb_pii_findings_total\{[^}]*type="email"[^}]*\}/);
  });

  it('blocks: the document fails with pii_blocked, naming counts and not values', async () => {
    const id = await uploadInto('guarded', 'refund-guarded.md');
    const document = await settled(id);
    expect(document).toMatchObject({
      status: 'failed',
      failure: { reason: 'pii_blocked' },
      pii: { email: 1, card: 1 },
    });
    expect(JSON.stringify(document)).not.toContain(EMAIL);
    const hits = await suite.search({ query: 'lighthouse', knowledgeBaseIds: ['guarded'] });
    expect(hits.hits.filter((h) => h.documentId === id)).toEqual([]);
  });

  it('leaves documents of a knowledge base with pii off untouched and unmarked', async () => {
    const response = await suite.upload(
      'refund-plain.md',
      `${LETTER}\nplain copy`,
      'text/markdown',
    );
    const { id } = (await response.json()) as { id: string };
    const document = await settled(id);
    expect(document.status).toBe('indexed');
    expect(document).not.toHaveProperty('pii');

    // The setting can change later (it applies to versions parsed from then on).
    const knowledgeBase = `${suite.documentUrl}/v1/knowledge-bases/redacted`;
    const patched = await fetch(knowledgeBase, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json', ...(await suite.auth()) },
      body: JSON.stringify({ pii: 'detect' }),
    });
    expect(patched.status).toBe(200);
    const read = await fetch(knowledgeBase, { headers: await suite.auth() });
    expect(await read.json()).toMatchObject({ id: 'redacted', pii: 'detect' });
  });
});
