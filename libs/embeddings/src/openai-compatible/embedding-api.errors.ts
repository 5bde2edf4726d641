/**
 * Why a call to an embedding API failed:
 * - `rejected`: a 4xx other than 408/429 — the request itself is wrong (unknown model, input too
 *   long, bad key); sending it again cannot help.
 * - `rate_limited`: 429.
 * - `unavailable`: 408 or 5xx.
 * - `timeout`: no complete answer within the request timeout.
 * - `network`: connection refused or reset, DNS failure, a body cut off.
 * - `invalid_response`: a 2xx whose body is not the embeddings the request asked for.
 */
export type EmbeddingApiErrorCode =
  'rejected' | 'rate_limited' | 'unavailable' | 'timeout' | 'network' | 'invalid_response';

/** Transient failures are worth retrying after a pause; the others fail at once. */
export function isTransient(code: EmbeddingApiErrorCode): boolean {
  switch (code) {
    case 'rate_limited':
    case 'unavailable':
    case 'timeout':
    case 'network':
      return true;
    case 'rejected':
    case 'invalid_response':
      return false;
  }
}

export interface EmbeddingApiErrorDetails {
  /** The HTTP status, when the API answered. */
  status?: number;
  /** The API's own error message (OpenAI's `error.message`, TEI's `error`, …). */
  providerMessage?: string;
  /** How long the API asked the client to wait (Retry-After and similar headers). */
  retryAfterMs?: number;
  /** Attempts made before this error was thrown (1 when it was not retried). */
  attempts?: number;
}

export class EmbeddingApiError extends Error {
  readonly status: number | undefined;
  readonly providerMessage: string | undefined;
  readonly retryAfterMs: number | undefined;
  readonly attempts: number;

  constructor(
    readonly code: EmbeddingApiErrorCode,
    message: string,
    details: EmbeddingApiErrorDetails = {},
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'EmbeddingApiError';
    this.status = details.status;
    this.providerMessage = details.providerMessage;
    this.retryAfterMs = details.retryAfterMs;
    this.attempts = details.attempts ?? 1;
  }

  get transient(): boolean {
    return isTransient(this.code);
  }
}

/** The code for an HTTP error status. */
export function codeForStatus(status: number): EmbeddingApiErrorCode {
  if (status === 429) return 'rate_limited';
  if (status === 408 || status >= 500) return 'unavailable';
  return 'rejected';
}

/**
 * The message in an error body, in the shapes OpenAI-compatible servers use: OpenAI, Ollama and
 * LiteLLM `{"error": {"message"}}`, TEI `{"error": "..."}`, vLLM `{"message"}`, FastAPI
 * `{"detail"}`; else the start of the body as text.
 */
export function providerMessageOf(body: string): string | undefined {
  const text = body.trim();
  if (!text) return undefined;
  try {
    const parsed = JSON.parse(text) as Record<string, unknown> | null;
    const error = parsed?.['error'];
    const candidates = [
      typeof error === 'object' && error !== null
        ? (error as Record<string, unknown>)['message']
        : error,
      parsed?.['message'],
      parsed?.['detail'],
    ];
    for (const candidate of candidates) {
      if (typeof candidate === 'string' && candidate) return candidate.slice(0, 500);
      if (candidate !== undefined && candidate !== null && typeof candidate === 'object') {
        return JSON.stringify(candidate).slice(0, 500);
      }
    }
  } catch {
    // Not JSON: a proxy's HTML page or plain text.
  }
  return text.slice(0, 300);
}
