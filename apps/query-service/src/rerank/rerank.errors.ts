import { DomainError, ErrorKind } from '@kb/errors';

export enum RerankErrorCode {
  /** RERANKER_MODEL is not set: this deployment has no cross-encoder to rerank with. */
  NoCrossEncoder = 'cross_encoder_not_loaded',
  /** The request names a model other than the cross-encoder loaded here. */
  ModelNotServed = 'reranker_model_not_served',
}

const KIND: Record<RerankErrorCode, ErrorKind> = {
  [RerankErrorCode.NoCrossEncoder]: ErrorKind.Unavailable,
  [RerankErrorCode.ModelNotServed]: ErrorKind.InvalidArgument,
};

export class RerankError extends DomainError<RerankErrorCode> {
  constructor(code: RerankErrorCode, message: string) {
    super(code, KIND[code], message);
  }
}
