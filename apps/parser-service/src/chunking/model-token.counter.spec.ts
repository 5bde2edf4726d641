import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { loadTokenCounter } from './model-token.counter';
import { wordCounter } from './token.counter';

describe('loadTokenCounter', () => {
  it('falls back to the word estimate, with a warning, when the model folder is missing', async () => {
    const warnings: string[] = [];
    const dir = mkdtempSync(join(tmpdir(), 'kb-no-model-'));
    const counter = await loadTokenCounter({ modelDir: dir, model: 'absent-model' }, (m) =>
      warnings.push(m),
    );
    expect(counter).toBe(wordCounter);
    expect(warnings).toEqual([expect.stringContaining('absent-model/tokenizer.json')]);
    expect(await loadTokenCounter({ model: 'absent-model' }, () => undefined)).toBe(wordCounter);
  });
});
