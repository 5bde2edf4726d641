import { DomainError, ErrorKind } from '@kb/errors';

/** Codes of the OpenAI-compatible API; clients read them as `error.code`. */
export enum OpenAiErrorCode {
  /** The body is not a valid embeddings request (a field missing, of the wrong type, empty). */
  InvalidRequest = 'invalid_request',
  /** `input` holds token ids: they are the caller's tokenizer's, which our model does not share. */
  TokenInputUnsupported = 'token_input_unsupported',
  /** More inputs, or more characters in all, than one request may carry. */
  InputTooLarge = 'input_too_large',
  /** `dimensions` asks for another size than the model produces. */
  DimensionsUnsupported = 'dimensions_unsupported',
  /** `model` names no model served here (OpenAI's own code for it). */
  ModelNotFound = 'model_not_found',
}

const KIND: Record<OpenAiErrorCode, ErrorKind> = {
  [OpenAiErrorCode.InvalidRequest]: ErrorKind.InvalidArgument,
  [OpenAiErrorCode.TokenInputUnsupported]: ErrorKind.InvalidArgument,
  [OpenAiErrorCode.InputTooLarge]: ErrorKind.InvalidArgument,
  [OpenAiErrorCode.DimensionsUnsupported]: ErrorKind.InvalidArgument,
  [OpenAiErrorCode.ModelNotFound]: ErrorKind.NotFound,
};

/** An OpenAI-compatible request refused; `param` names the request field at fault, as OpenAI does. */
export class OpenAiError extends DomainError<OpenAiErrorCode> {
  constructor(
    code: OpenAiErrorCode,
    message: string,
    readonly param: string | null = null,
  ) {
    super(code, KIND[code], message, { param });
  }
}
