import type { Readable } from 'node:stream';

import { type ExtractedText, extractedTextKey } from '@kb/contracts';
import { putJson } from '@kb/storage';

import {
  documentServiceFixture,
  newAccess,
  spool,
  TENANT,
} from '../testing/document-service.fixture';
import { DocumentContentService } from './document-content.service';

const files = spool();
afterAll(() => files.cleanup());

/** Texts stored whole before review N6 are read whole: a bounded number at a time. */
describe('DocumentContentService, texts stored before windows', () => {
  it('reads at most legacyConcurrency of them at once; the others wait their turn', async () => {
    const f = documentServiceFixture();
    const alice = newAccess();
    const ids: string[] = [];
    for (const name of ['one', 'two', 'three']) {
      const document = await f.documents.upload(TENANT, alice, files.file(name), {});
      const extracted: ExtractedText = {
        documentId: document.id,
        version: 1,
        format: 'text',
        text: name,
        pages: [],
        headings: [],
      };
      await putJson(f.blobs, extractedTextKey(TENANT, document.id, 1), extracted);
      ids.push(document.id);
    }
    // Each whole read of a text.json is held open until the test lets it go.
    let open = 0;
    let most = 0;
    const releases: Array<() => void> = [];
    const { openRead } = f.blobs;
    f.blobs.openRead = async (key, range) => {
      if (!key.endsWith('/text.json')) return openRead.call(f.blobs, key, range);
      open += 1;
      most = Math.max(most, open);
      await new Promise<void>((resolve) => releases.push(resolve));
      open -= 1;
      return openRead.call(f.blobs, key, range) as Promise<Readable>;
    };
    const content = new DocumentContentService(f.documentsRepository, f.blobs, f.audit, {
      legacyConcurrency: 2,
    });
    const reads = ids.map((id) => content.text(TENANT, alice, id, { offset: 0, limit: 10 }));
    for (let i = 0; i < 3; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      releases.shift()?.();
    }
    expect((await Promise.all(reads)).map((r) => r.text)).toEqual(['one', 'two', 'three']);
    expect(most).toBe(2);
  });
});
