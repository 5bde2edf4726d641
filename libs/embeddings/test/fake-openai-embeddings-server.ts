import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the fake does with one request instead of answering it normally. */
export type FakeFailure =
  /** Answers with this status, body and headers (e.g. 429 with Retry-After, 503, 400). */
  | { status: number; body?: unknown; headers?: Record<string, string> }
  /** Destroys the connection without answering. */
  | { reset: true }
  /** Answers normally, but only after this long (past the client's timeout, it is a timeout). */
  | { delayMs: number };

export interface FakeRequest {
  /** performance.now() when the request arrived. */
  at: number;
  model: string;
  input: string[];
  dimensions?: number;
  authorization?: string;
}

export interface FakeOpenAiEmbeddingsOptions {
  /** The model's own dimension. Default 12. */
  dimension?: number;
  /** The only model name it knows; others get OpenAI's 404 model_not_found. */
  model?: string;
  /** When set, requests without `Authorization: Bearer <apiKey>` get 401. */
  apiKey?: string;
  /** Lists `data` in reverse order, so a client that ignores `index` gets the wrong vectors. */
  reverse?: boolean;
}

/**
 * FAKE OpenAI-compatible embeddings API for tests: a real HTTP server on 127.0.0.1 (port 0) that
 * speaks `POST /v1/embeddings` as OpenAI documents it, with deterministic vectors derived from
 * each text (not normalized, so a client must normalize), and failures scripted per request.
 * No model runs here; the same client is tested against a real API when EMBEDDING_API_URL is set.
 */
export class FakeOpenAiEmbeddingsServer {
  readonly requests: FakeRequest[] = [];
  private readonly failures: FakeFailure[] = [];
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly server: Server = createServer((req, res) => void this.route(req, res));
  readonly dimension: number;
  readonly model: string;

  constructor(private readonly options: FakeOpenAiEmbeddingsOptions = {}) {
    this.dimension = options.dimension ?? 12;
    this.model = options.model ?? 'fake-embed';
  }

  /** Starts listening; returns the API root to configure (`http://127.0.0.1:<port>/v1`). */
  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
  }

  async stop(): Promise<void> {
    for (const timer of this.timers) clearTimeout(timer);
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** The next requests, one each, fail as given (in order); later ones are answered normally. */
  failNext(...failures: FakeFailure[]): void {
    this.failures.push(...failures);
  }

  /** Forgets recorded requests and pending failures. */
  reset(): void {
    this.requests.length = 0;
    this.failures.length = 0;
  }

  /** The vector the fake returns for `text` (before any client-side normalization). */
  vectorFor(text: string, dimensions = this.dimension): number[] {
    const digest = createHash('sha256').update(text).digest();
    return Array.from({ length: dimensions }, (_, i) => (digest[i % digest.length]! - 127.5) / 16);
  }

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readJson(req);
    if (req.method !== 'POST' || req.url !== '/v1/embeddings') {
      return send(res, 404, openAiError(`no route ${req.method} ${req.url}`, 'not_found'));
    }
    const request: FakeRequest = {
      at: performance.now(),
      model: String(body?.['model']),
      input: body?.['input'] as string[],
      dimensions: body?.['dimensions'] as number | undefined,
      authorization: req.headers.authorization,
    };
    this.requests.push(request);
    const failure = this.failures.shift();
    if (failure && 'reset' in failure) {
      req.socket.destroy();
      return;
    }
    if (failure && 'status' in failure) {
      return send(res, failure.status, failure.body ?? {}, failure.headers);
    }
    if (failure && 'delayMs' in failure) {
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        this.answer(request, res);
      }, failure.delayMs);
      this.timers.add(timer);
      return;
    }
    this.answer(request, res);
  }

  private answer(request: FakeRequest, res: ServerResponse): void {
    if (res.socket?.destroyed ?? true) return; // The client gave up (its timeout) first.
    if (this.options.apiKey && request.authorization !== `Bearer ${this.options.apiKey}`) {
      return send(res, 401, openAiError('Incorrect API key provided', 'invalid_api_key'));
    }
    if (request.model !== this.model) {
      return send(
        res,
        404,
        openAiError(`The model \`${request.model}\` does not exist`, 'model_not_found'),
      );
    }
    const { input, dimensions } = request;
    if (!Array.isArray(input) || input.length === 0 || input.some((t) => typeof t !== 'string')) {
      return send(res, 400, openAiError("'input' must be a non-empty array of strings", null));
    }
    if (dimensions !== undefined && (dimensions < 1 || dimensions > this.dimension)) {
      return send(res, 400, openAiError(`dimensions must be 1..${this.dimension}`, null));
    }
    const data = input.map((text, index) => ({
      object: 'embedding',
      index,
      embedding: this.vectorFor(text, dimensions ?? this.dimension),
    }));
    if (this.options.reverse) data.reverse();
    const tokens = input.reduce((sum, text) => sum + Math.ceil(text.length / 4), 0);
    send(res, 200, {
      object: 'list',
      data,
      model: this.model,
      usage: { prompt_tokens: tokens, total_tokens: tokens },
    });
  }
}

const openAiError = (message: string, code: string | null) => ({
  error: { message, type: 'invalid_request_error', param: null, code },
});

async function readJson(req: IncomingMessage): Promise<Record<string, unknown> | null> {
  const parts: Buffer[] = [];
  for await (const part of req) parts.push(part as Buffer);
  try {
    return JSON.parse(Buffer.concat(parts).toString('utf8')) as Record<string, unknown>;
  } catch {
    return null;
  }
}

function send(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}
