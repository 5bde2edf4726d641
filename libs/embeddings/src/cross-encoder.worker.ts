import { CrossEncoderModel, type CrossEncoderOptions } from './cross-encoder-model';

/** One task for the cross-encoder's worker thread (cross-encoder-pool.ts). */
export interface CrossEncoderTask {
  options: CrossEncoderOptions;
  query: string;
  passages: string[];
}

let loaded: Promise<CrossEncoderModel> | undefined;

/**
 * The worker thread's entry point (the pool loads the compiled file): the model loads once, on
 * the first task, and scores one batch at a time, so a run blocks this thread and never the
 * service's event loop.
 */
export default async function scoreInWorker(task: CrossEncoderTask): Promise<number[]> {
  loaded ??= CrossEncoderModel.load(task.options);
  const model = await loaded;
  return task.passages.length === 0 ? [] : model.score(task.query, task.passages);
}
