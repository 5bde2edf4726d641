import type { PiiSummary } from '@kb/contracts';
import { PermanentError } from '@kb/kafka';

import { piiModeOf, screenPii } from './pii.screen';

const text = 'Page one: write to jane.doe@example.com.\fPage two: card 4111 1111 1111 1111.';
const split = text.indexOf('\f') + 1;
const pages = [
  { page: 1, start: 0, end: split },
  { page: 2, start: split, end: text.length },
];

async function screen(mode: 'off' | 'detect' | 'redact' | 'block') {
  const reported: PiiSummary[] = [];
  const result = await screenPii(mode, { text, pages }, ['hr'], async (f) => {
    reported.push(f);
  });
  return { result, reported };
}

describe('screenPii', () => {
  it('looks for nothing when off', async () => {
    const { result, reported } = await screen('off');
    expect(result).toEqual({ text, pages });
    expect(reported).toEqual([]);
  });

  it('counts findings when detecting, and leaves the text as it is', async () => {
    const { result, reported } = await screen('detect');
    expect(result.text).toBe(text);
    expect(reported).toEqual([{ email: 1, card: 1 }]);
  });

  it('redacts, and moves the pages onto the redacted text', async () => {
    const { result, reported } = await screen('redact');
    expect(result.text).toBe('Page one: write to [EMAIL].\fPage two: card [CARD].');
    expect(reported).toEqual([{ email: 1, card: 1 }]);
    const [one, two] = result.pages!;
    expect(result.text.slice(one!.start, one!.end)).toBe('Page one: write to [EMAIL].\f');
    expect(result.text.slice(two!.start, two!.end)).toBe('Page two: card [CARD].');
  });

  it('blocks a text with findings as pii_blocked, naming counts and never values', async () => {
    const reported: PiiSummary[] = [];
    const blocked = screenPii('block', { text, pages }, [], async (f) => {
      reported.push(f);
    });
    await expect(blocked).rejects.toThrow(PermanentError);
    await expect(blocked).rejects.toMatchObject({ reason: 'pii_blocked' });
    await expect(blocked).rejects.toThrow(/1 email, 1 card/);
    await expect(blocked).rejects.not.toThrow(/jane/);
    expect(reported).toEqual([{ email: 1, card: 1 }]);
  });

  it('lets a clean text through a block', async () => {
    const reported: PiiSummary[] = [];
    const clean = { text: 'Nothing personal, 2024-01-15.', pages: undefined };
    await expect(
      screenPii('block', clean, [], async (f) => {
        reported.push(f);
      }),
    ).resolves.toEqual({ ...clean, findings: {} });
    expect(reported).toEqual([{}]);
  });

  it('applies the strictest setting of a document’s pipelines', () => {
    const pipeline = (pii?: 'detect' | 'redact' | 'block') => ({ ...(pii ? { pii } : {}) });
    expect(piiModeOf({ pipelines: [pipeline(), pipeline()] } as never)).toBe('off');
    expect(piiModeOf({ pipelines: [pipeline('detect'), pipeline('redact')] } as never)).toBe(
      'redact',
    );
    expect(piiModeOf({ pipelines: [pipeline('block'), pipeline('redact')] } as never)).toBe(
      'block',
    );
  });
});
