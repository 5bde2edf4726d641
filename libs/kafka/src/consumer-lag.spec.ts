import { lagOf } from './consumer-lag';

describe('lagOf', () => {
  it('sums latest minus committed over the partitions', () => {
    expect(
      lagOf(
        [
          { partition: 0, offset: '120' },
          { partition: 1, offset: '40' },
        ],
        [
          { partition: 0, offset: '100' },
          { partition: 1, offset: '40' },
        ],
      ),
    ).toBe(20);
  });

  it('counts a partition the group never committed from the earliest offset kept', () => {
    expect(
      lagOf(
        [
          { partition: 0, offset: '50', low: '10' },
          { partition: 1, offset: '7' },
        ],
        [
          { partition: 0, offset: '-1' },
          { partition: 1, offset: '-1' },
        ],
      ),
    ).toBe(47);
  });

  it('is never negative (a commit read after a newer end)', () => {
    expect(lagOf([{ partition: 0, offset: '5' }], [{ partition: 0, offset: '9' }])).toBe(0);
  });
});
