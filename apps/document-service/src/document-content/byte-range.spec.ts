import { ifRangeHolds, rangeOf } from './byte-range';

describe('rangeOf', () => {
  it('serves a single range, an open range and a suffix, clamped to the size', () => {
    expect(rangeOf('bytes=0-9', 100)).toEqual({ kind: 'partial', range: { start: 0, end: 9 } });
    expect(rangeOf('bytes=90-', 100)).toEqual({ kind: 'partial', range: { start: 90, end: 99 } });
    expect(rangeOf('bytes=-10', 100)).toEqual({ kind: 'partial', range: { start: 90, end: 99 } });
    expect(rangeOf('bytes=-500', 100)).toEqual({ kind: 'partial', range: { start: 0, end: 99 } });
    expect(rangeOf('bytes=50-5000', 100)).toEqual({
      kind: 'partial',
      range: { start: 50, end: 99 },
    });
    expect(rangeOf('bytes=99-99', 100)).toEqual({ kind: 'partial', range: { start: 99, end: 99 } });
  });

  it('is unsatisfiable past the end or for an empty suffix', () => {
    expect(rangeOf('bytes=100-', 100)).toEqual({ kind: 'unsatisfiable' });
    expect(rangeOf('bytes=100-200', 100)).toEqual({ kind: 'unsatisfiable' });
    expect(rangeOf('bytes=-0', 100)).toEqual({ kind: 'unsatisfiable' });
  });

  it('answers whole for no header, other units, malformed, reversed or several ranges', () => {
    for (const header of [
      undefined,
      '',
      'items=0-1',
      'bytes=',
      'bytes=-',
      'bytes=a-b',
      'bytes=9-0',
      'bytes=0-1,5-6',
    ]) {
      expect(rangeOf(header, 100)).toEqual({ kind: 'whole' });
    }
  });
});

describe('ifRangeHolds', () => {
  it('holds without the header or with the current entity tag only', () => {
    expect(ifRangeHolds(undefined, '"abc"')).toBe(true);
    expect(ifRangeHolds('"abc"', '"abc"')).toBe(true);
    expect(ifRangeHolds('"old"', '"abc"')).toBe(false);
    expect(ifRangeHolds('Wed, 21 Oct 2015 07:28:00 GMT', '"abc"')).toBe(false);
  });
});
