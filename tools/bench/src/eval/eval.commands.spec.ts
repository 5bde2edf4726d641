import { InvalidArgumentError } from 'commander';

import { parseModes } from './eval.commands';

describe('kb-tools eval --mode', () => {
  it('takes one mode or a comma list, and refuses unknown ones', () => {
    expect(parseModes('hybrid')).toEqual(['hybrid']);
    expect(parseModes('lexical, semantic,auto')).toEqual(['lexical', 'semantic', 'auto']);
    expect(() => parseModes('hybrid,bm25')).toThrow(InvalidArgumentError);
  });
});
