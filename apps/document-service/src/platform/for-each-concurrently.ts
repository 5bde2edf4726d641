/**
 * Runs `task` over `items`, at most `concurrency` at a time, in order of start. The first failure
 * rejects the whole; the tasks already running finish, and the rest of the items are still taken.
 */
export async function forEachConcurrently<T>(
  items: readonly T[],
  concurrency: number,
  task: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const item = items[next] as T;
      next += 1;
      await task(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
}
