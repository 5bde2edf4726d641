import { codeForStatus, EmbeddingApiError, providerMessageOf } from './embedding-api.errors';

describe('codeForStatus', () => {
  it.each([
    [429, 'rate_limited', true],
    [408, 'unavailable', true],
    [500, 'unavailable', true],
    [503, 'unavailable', true],
    [400, 'rejected', false],
    [401, 'rejected', false],
    [404, 'rejected', false],
    [413, 'rejected', false],
  ] as const)('HTTP %d is %s (transient: %s)', (status, code, transient) => {
    expect(codeForStatus(status)).toBe(code);
    expect(new EmbeddingApiError(codeForStatus(status), 'x').transient).toBe(transient);
  });
});

describe('providerMessageOf', () => {
  it.each([
    [
      'OpenAI, Ollama, LiteLLM',
      '{"error":{"message":"bad input","type":"invalid_request_error"}}',
      'bad input',
    ],
    [
      'TEI',
      '{"error":"Input validation error","error_type":"Validation"}',
      'Input validation error',
    ],
    ['vLLM', '{"object":"error","message":"too long","code":400}', 'too long'],
    ['FastAPI', '{"detail":"Not authenticated"}', 'Not authenticated'],
    ['plain text', 'Bad Gateway', 'Bad Gateway'],
  ])('reads %s', (_server, body, message) => {
    expect(providerMessageOf(body)).toBe(message);
  });

  it('is undefined for an empty body', () => {
    expect(providerMessageOf('  ')).toBeUndefined();
  });
});
