import { forEachConcurrently } from './for-each-concurrently';

describe('forEachConcurrently', () => {
  it('runs every item once, never more than `concurrency` at a time', async () => {
    let running = 0;
    let peak = 0;
    const seen: number[] = [];
    await forEachConcurrently([1, 2, 3, 4, 5, 6, 7], 3, async (item) => {
      running += 1;
      peak = Math.max(peak, running);
      await new Promise((resolve) => setTimeout(resolve, 1));
      seen.push(item);
      running -= 1;
    });
    expect(seen.sort()).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(peak).toBe(3);
  });

  it('rejects with the first failure', async () => {
    await expect(
      forEachConcurrently([1, 2], 2, async (item) => {
        if (item === 2) throw new Error('two failed');
      }),
    ).rejects.toThrow('two failed');
  });

  it('does nothing for no items', async () => {
    const task = jest.fn();
    await forEachConcurrently([], 8, task);
    expect(task).not.toHaveBeenCalled();
  });
});
