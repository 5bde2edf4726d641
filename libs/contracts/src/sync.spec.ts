import { planSync } from './sync';

describe('planSync', () => {
  it('adds new files, versions changed ones, keeps the same and deletes the gone', () => {
    const plan = planSync(
      [
        { path: 'a.md', sha256: '1' },
        { path: 'b.md', sha256: '2-new' },
        { path: 'c.md', sha256: '3' },
      ],
      [
        { path: 'b.md', documentId: 'db', sha256: '2' },
        { path: 'c.md', documentId: 'dc', sha256: '3' },
        { path: 'd.md', documentId: 'dd', sha256: '4' },
      ],
    );
    expect(plan).toEqual({
      add: [{ path: 'a.md', sha256: '1' }],
      update: [{ path: 'b.md', sha256: '2-new', documentId: 'db' }],
      unchanged: [{ path: 'c.md', sha256: '3' }],
      delete: [{ path: 'd.md', documentId: 'dd', sha256: '4' }],
    });
  });

  it('changes nothing when the source matches what was synced', () => {
    const files = [{ path: 'a', sha256: 'x' }];
    const plan = planSync(files, [{ path: 'a', documentId: 'd', sha256: 'x' }]);
    expect([plan.add, plan.update, plan.delete]).toEqual([[], [], []]);
    expect(plan.unchanged).toEqual(files);
  });
});
