import { DomainError, ErrorKind } from '@kb/errors';

export enum PrecomputedChunksErrorCode {
  /** An embedding with a value that is not a finite number, or of another length than 1 (ADR 33). */
  InvalidVector = 'invalid_vector',
  /** The knowledge base does not take pre-computed vectors (`allowPrecomputedVectors`, ADR 33). */
  Disabled = 'precomputed_vectors_disabled',
}

const KIND: Record<PrecomputedChunksErrorCode, ErrorKind> = {
  [PrecomputedChunksErrorCode.InvalidVector]: ErrorKind.InvalidArgument,
  [PrecomputedChunksErrorCode.Disabled]: ErrorKind.FailedPrecondition,
};

export class PrecomputedChunksError extends DomainError<PrecomputedChunksErrorCode> {
  constructor(code: PrecomputedChunksErrorCode, message: string) {
    super(code, KIND[code], message);
  }
}
