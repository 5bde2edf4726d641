import { ModelBusyError, ModelRunQueue } from './model-run.queue';
import { restErrorOf } from './rest-exception.filter';

/** A task that finishes when told to. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, task: () => opened.then(() => 'done') };
}

describe('ModelRunQueue', () => {
  it('runs up to `concurrency` at once, queues up to `maxWaiting`, refuses the rest with model_busy', async () => {
    const queue = new ModelRunQueue({ name: 'embeddings', concurrency: 1, maxWaiting: 2 });
    const gates = [gate(), gate(), gate()];
    const runs = gates.map((g) => queue.run(g.task));
    expect(queue.load).toEqual({ running: 1, waiting: 2 });
    const refusal = await queue.run(async () => 'never').catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(ModelBusyError);
    expect(restErrorOf(refusal)).toEqual([
      429,
      {
        error: {
          code: 'model_busy',
          message: 'too many embeddings requests are waiting for the model; retry shortly',
        },
      },
    ]);
    expect((refusal as ModelBusyError).retryAfterSeconds).toBe(1);
    for (const g of gates) g.open();
    await expect(Promise.all(runs)).resolves.toEqual(['done', 'done', 'done']);
    expect(queue.load).toEqual({ running: 0, waiting: 0 });
  });

  it('frees the slot when a run fails', async () => {
    const queue = new ModelRunQueue({ name: 'rerank', concurrency: 1, maxWaiting: 0 });
    await expect(queue.run(() => Promise.reject(new Error('model crashed')))).rejects.toThrow(
      'model crashed',
    );
    await expect(queue.run(async () => 7)).resolves.toBe(7);
  });
});
