import { DomainError, ErrorKind, errorKindOfHttpStatus } from '@kb/errors';

/** The code of document-service failures that are not its own answer. */
export const DOCUMENT_SERVICE_UNAVAILABLE = 'unavailable';

/**
 * document-service's answer to a read made for the caller: its own refusals (400, 401, 403, 404,
 * 409, and 429 with its retry delay) keep their code and the kind of their status, so a gRPC
 * client sees what a REST one would; anything else is unavailable.
 */
export class DocumentServiceError extends DomainError {
  static relayed(httpStatus: number, code: string, message: string): DocumentServiceError {
    return new DocumentServiceError(code, errorKindOfHttpStatus(httpStatus), message);
  }

  /** document-service's 429: the caller's `read` budget is spent (review N6); retry after it. */
  static rateLimited(message: string, retryAfterSeconds: number): DocumentServiceError {
    return new DocumentServiceError(
      'rate_limited',
      ErrorKind.ResourceExhausted,
      message,
      undefined,
      {
        retryAfterSeconds,
      },
    );
  }

  static unavailable(message: string): DocumentServiceError {
    return new DocumentServiceError(DOCUMENT_SERVICE_UNAVAILABLE, ErrorKind.Unavailable, message);
  }
}
