/**
 * Every format the parser reads, end to end (issue 38): a file made by a library in the test,
 * uploaded, `indexed`, found by a search for its unique word, the hit on the right page, slide
 * or sheet. Scans (a one-page PDF without a text layer, a PNG) are read by OCR. A knowledge base
 * created with OCR off leaves an image unread (docs/adr/0050).
 */
import { formatFiles, renderedText } from '../support/format-files';
import { useSuite } from '../support/suite';
import { waitFor } from '../support/wait';

jest.setTimeout(300_000);

describe('formats', () => {
  const suite = useSuite('formats', 8100);

  it('indexes one file of each format and finds its word on its page', async () => {
    const files = await formatFiles();
    const uploaded: Array<{ id: string; file: (typeof files)[number] }> = [];
    for (const file of files) {
      const response = await suite.upload(file.filename, file.body, file.type);
      expect({ file: file.filename, status: response.status }).toEqual({
        file: file.filename,
        status: 202,
      });
      uploaded.push({ id: ((await response.json()) as { id: string }).id, file });
    }
    for (const { id, file } of uploaded) {
      const document = await waitFor(
        () => suite.getDocument(id),
        (d) => ['indexed', 'failed'].includes(d.status),
        120_000,
      );
      expect({
        file: file.filename,
        status: document.status,
        failure: document['failure'],
      }).toEqual({
        file: file.filename,
        status: 'indexed',
        failure: null,
      });
      const found = await suite.search({ query: file.word, topK: 5, mode: 'lexical' });
      const hit = found.hits.find((h) => h.documentId === id) as
        { page?: number; text: string } | undefined;
      expect({ file: file.filename, found: hit !== undefined, page: hit?.page }).toEqual({
        file: file.filename,
        found: true,
        page: file.page,
      });
      expect(hit!.text.toLowerCase()).toContain(file.word);
    }
    // What OCR read is reported with the text: the page, its confidence, not flagged.
    for (const { id, file } of uploaded.filter((u) => /scan|whiteboard/.test(u.file.filename))) {
      const response = await fetch(`${suite.documentUrl}/v1/documents/${id}/text`, {
        headers: await suite.auth(),
      });
      const text = (await response.json()) as {
        ocr?: {
          languages: string[];
          pages: Array<{ page: number; confidence: number; flagged: boolean }>;
        };
      };
      expect({
        file: file.filename,
        languages: text.ocr?.languages,
        page: text.ocr?.pages[0],
      }).toEqual({
        file: file.filename,
        languages: ['eng'],
        page: {
          page: 1,
          confidence: expect.any(Number),
          flagged: false,
          chars: expect.any(Number),
        },
      });
      expect(text.ocr!.pages[0]!.confidence).toBeGreaterThanOrEqual(60);
    }
  });

  it('leaves an image unread in a knowledge base created with OCR off', async () => {
    const created = await fetch(`${suite.documentUrl}/v1/knowledge-bases`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(await suite.auth()) },
      body: JSON.stringify({ id: 'no-ocr', name: 'No OCR', parsing: { ocr: false } }),
    });
    expect(created.status).toBe(201);
    expect(await created.json()).toMatchObject({
      parsing: { ocr: false, ocrLanguages: [], tableMode: 'records' },
    });
    const response = await suite.upload(
      'photo.png',
      renderedText('A photo of the harbour master'),
      'image/png',
      suite.tenant,
      { knowledgeBaseIds: ['no-ocr'] },
    );
    const { id } = (await response.json()) as { id: string };
    const document = await waitFor(
      () => suite.getDocument(id),
      (d) => ['indexed', 'failed'].includes(d.status),
      60_000,
    );
    expect(document).toMatchObject({ status: 'failed', failure: { reason: 'no_text' } });
  });
});
