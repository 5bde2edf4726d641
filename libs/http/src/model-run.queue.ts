import { DomainError, ErrorKind } from '@kb/errors';
import { meter } from '@kb/observability';

export enum ModelRunErrorCode {
  ModelBusy = 'model_busy',
}

/** The queue for model runs on request is full: 429 `model_busy` with `Retry-After`. */
export class ModelBusyError extends DomainError<ModelRunErrorCode> {
  constructor(message: string, retryAfterSeconds = 1) {
    super(ModelRunErrorCode.ModelBusy, ErrorKind.ResourceExhausted, message, undefined, {
      retryAfterSeconds,
    });
  }
}

/** The service's queue for model runs on request (a `ModelRunQueue`). */
export const MODEL_API_QUEUE = Symbol('MODEL_API_QUEUE');

export interface ModelRunQueueOptions {
  /** What the queue serves, for messages and metrics (`embeddings`, `rerank`). */
  name: string;
  /** Runs at once. */
  concurrency: number;
  /** Runs waiting for a slot; past it, `model_busy`. */
  maxWaiting: number;
}

const refused = meter().createCounter('kb_model_busy_total', {
  description: 'Model runs on request refused with 429 model_busy (their queue was full), by queue',
});

/**
 * A bounded queue for model runs that API callers ask for (`POST /v1/embeddings`, `POST
 * /v1/rerank`), apart from the service's own work (ingestion, searches): at most `concurrency`
 * of them hold the model at once, at most `maxWaiting` more wait, and any further call is refused
 * at once with 429 `model_busy` rather than queued behind the model (security review N5).
 */
export class ModelRunQueue {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly options: ModelRunQueueOptions) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.running >= this.options.concurrency) {
      if (this.waiting.length >= this.options.maxWaiting) {
        refused.add(1, { queue: this.options.name });
        throw new ModelBusyError(
          `too many ${this.options.name} requests are waiting for the model; retry shortly`,
        );
      }
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else {
      this.running++;
    }
    try {
      return await task();
    } finally {
      // Hand the slot to the next waiting call, or free it.
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }

  /** Runs holding the model and runs waiting, for tests and metrics. */
  get load(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.waiting.length };
  }
}
