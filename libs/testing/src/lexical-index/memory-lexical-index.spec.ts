import { lexicalIndexConformance } from '@kb/lexical-index/test/support/conformance';

import { englishTerms } from './english-terms';
import { MemoryLexicalIndex } from './memory-lexical-index';

describe('MemoryLexicalIndex', () => {
  const index = new MemoryLexicalIndex();
  lexicalIndexConformance(() => index);
});

describe('englishTerms', () => {
  it('lower-cases, drops stop words and punctuation, and folds plurals', () => {
    expect(englishTerms("The Books' classes, and THE libraries!")).toEqual([
      'book',
      'class',
      'librari',
    ]);
  });
});
