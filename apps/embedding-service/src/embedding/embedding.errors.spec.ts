import { EmbeddingApiError } from '@kb/embeddings';
import { PermanentError } from '@kb/kafka';

import { toConsumerError } from './embedding.errors';

describe('toConsumerError', () => {
  it('dead-letters a request the embedding API refused, with its message', () => {
    const refused = new EmbeddingApiError('rejected', 'HTTP 400: input too long', { status: 400 });
    const mapped = toConsumerError(refused);
    expect(mapped).toBeInstanceOf(PermanentError);
    expect(mapped).toMatchObject({
      reason: 'embedding_error',
      message: 'HTTP 400: input too long',
    });
  });

  it('dead-letters a response that is not embeddings', () => {
    expect(toConsumerError(new EmbeddingApiError('invalid_response', 'no data'))).toBeInstanceOf(
      PermanentError,
    );
  });

  it('leaves transient failures to the consumer retries', () => {
    const exhausted = new EmbeddingApiError('unavailable', 'HTTP 503 (gave up after 5 attempts)');
    expect(toConsumerError(exhausted)).toBe(exhausted);
    const other = new Error('s3 down');
    expect(toConsumerError(other)).toBe(other);
  });
});
