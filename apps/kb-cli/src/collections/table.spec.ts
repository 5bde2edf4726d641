import { formatTable } from './table';

describe('formatTable', () => {
  it('aligns columns to their widest cell under a rule', () => {
    expect(
      formatTable(
        ['id', 'documents'],
        [
          ['handbook', 12],
          ['a', 3],
        ],
      ),
    ).toBe('id        documents\n--------  ---------\nhandbook  12\na         3\n');
  });
});
