import { DomainError, ErrorKind } from '@kb/errors';

export enum RequestErrorCode {
  InvalidArgument = 'invalid_argument',
}

const KIND: Record<RequestErrorCode, ErrorKind> = {
  [RequestErrorCode.InvalidArgument]: ErrorKind.InvalidArgument,
};

/** A request that fails validation at the edge (REST body or query, gRPC message). */
export class RequestError extends DomainError<RequestErrorCode> {
  constructor(code: RequestErrorCode, message: string, details?: unknown) {
    super(code, KIND[code], message, details);
  }
}
