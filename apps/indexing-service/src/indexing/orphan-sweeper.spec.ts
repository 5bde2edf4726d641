import { orphanAction } from './orphan-sweeper';

describe('orphanAction', () => {
  it('removes every chunk of a deleted document', () => {
    expect(orphanAction([1, 2], { version: 2, deleted: true })).toEqual({ remove: 'all' });
    expect(orphanAction([3], { deleted: true })).toEqual({ remove: 'all' });
  });

  it('removes versions older than the claimed one once the claimed one is in', () => {
    expect(orphanAction([1, 2, 3], { version: 3, deleted: false })).toEqual({
      remove: 'older',
      than: 3,
    });
  });

  it('leaves a document alone while its claimed version is still being written', () => {
    expect(orphanAction([1, 2], { version: 3, deleted: false })).toBeUndefined();
  });

  it('leaves consistent and unknown documents alone', () => {
    expect(orphanAction([2], { version: 2, deleted: false })).toBeUndefined();
    expect(orphanAction([1, 2], undefined)).toBeUndefined();
    expect(orphanAction([1], { deleted: false })).toBeUndefined();
  });
});
