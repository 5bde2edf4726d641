import { DEFAULT_CHUNKER } from './chunking';
import { tenantOfSpace, toIndexSpace } from './index-space';
import { combineParsingSettings, parsingSettingsSchema, pipelineKey, pipelineOf } from './pipeline';

const defaults = { chunker: DEFAULT_CHUNKER, model: 'all-MiniLM-L6-v2' };

describe('pipelines', () => {
  it('keys a pipeline by its chunker and model, and nothing else', () => {
    const paragraph = { strategy: 'paragraph', size: 400 } as const;
    expect(pipelineKey(paragraph, 'm')).toMatch(/^[a-f0-9]{12}$/);
    expect(pipelineKey(paragraph, 'm')).toBe(pipelineKey({ ...paragraph }, 'm'));
    expect(pipelineKey(paragraph, 'm')).not.toBe(pipelineKey(paragraph, 'n'));
    expect(pipelineKey(paragraph, 'm')).not.toBe(pipelineKey({ ...paragraph, size: 401 }, 'm'));
  });

  it("keeps the tenant's own space for the default pipeline and gives any other its own", () => {
    expect(pipelineOf('acme', DEFAULT_CHUNKER, 'all-MiniLM-L6-v2', defaults).space).toBe('acme');
    const other = pipelineOf('acme', DEFAULT_CHUNKER, 'test-hashing-384', defaults);
    expect(other.space).toBe(`acme~${other.key}`);
    expect(tenantOfSpace(toIndexSpace(other.space))).toBe('acme');
    const chunked = pipelineOf('acme', { ...DEFAULT_CHUNKER, size: 500 }, defaults.model, defaults);
    expect(chunked.space).not.toBe('acme');
  });
});

describe('parsing settings', () => {
  it('default to OCR on, the deployment languages and records', () => {
    expect(parsingSettingsSchema.parse({})).toEqual({
      ocr: true,
      ocrLanguages: [],
      tableMode: 'records',
    });
    expect(parsingSettingsSchema.safeParse({ ocrLanguages: ['English'] }).success).toBe(false);
  });

  it('combine for a document in several knowledge bases: OCR if any, every language, records if any', () => {
    expect(combineParsingSettings([undefined, undefined])).toBeUndefined();
    expect(
      combineParsingSettings([
        { ocr: false, ocrLanguages: ['deu'], tableMode: 'text' },
        { ocr: true, ocrLanguages: ['eng', 'deu'], tableMode: 'records' },
      ]),
    ).toEqual({ ocr: true, ocrLanguages: ['deu', 'eng'], tableMode: 'records' });
    expect(combineParsingSettings([{ ocr: false, ocrLanguages: [], tableMode: 'text' }])).toEqual({
      ocr: false,
      ocrLanguages: [],
      tableMode: 'text',
    });
  });
});
