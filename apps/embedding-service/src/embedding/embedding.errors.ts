import { EmbeddingApiError } from '@kb/embeddings';
import { PermanentError } from '@kb/kafka';

/**
 * Maps a failed model call to what the Kafka consumer should do. An embedding API that refused the
 * request (unknown model, input too long, bad key) or answered nonsense will do so again: the
 * document is dead-lettered at once as `embedding_error`. Transient failures, which the provider
 * has already retried with backoff, go back to the consumer, which retries the whole event.
 */
export function toConsumerError(error: unknown): unknown {
  if (error instanceof EmbeddingApiError && !error.transient) {
    return new PermanentError('embedding_error', error.message, { cause: error });
  }
  return error;
}
