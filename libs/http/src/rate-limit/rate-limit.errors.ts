import { DomainError, ErrorKind } from '@kb/errors';

export enum RateLimitErrorCode {
  RateLimited = 'rate_limited',
}

const KIND: Record<RateLimitErrorCode, ErrorKind> = {
  [RateLimitErrorCode.RateLimited]: ErrorKind.ResourceExhausted,
};

/** A caller or its tenant spent a budget: 429 with `Retry-After` (gRPC RESOURCE_EXHAUSTED). */
export class RateLimitError extends DomainError<RateLimitErrorCode> {
  constructor(message: string, retryAfterSeconds: number) {
    super(
      RateLimitErrorCode.RateLimited,
      KIND[RateLimitErrorCode.RateLimited],
      message,
      undefined,
      {
        retryAfterSeconds,
      },
    );
  }
}
