/**
 * Thrown by a handler when retrying cannot help (unsupported content, malformed input):
 * the message goes to the dead-letter topic at once, with `reason` as its machine-readable code.
 */
export class PermanentError extends Error {
  constructor(
    readonly reason: string,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'PermanentError';
  }
}

export function isPermanent(error: unknown): error is PermanentError {
  return error instanceof PermanentError;
}
