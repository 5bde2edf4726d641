import { ConfigError, loadConfig } from '@kb/config';

import { embeddingServiceConfigSchema } from './embedding.config';

const load = (env: Record<string, string>) =>
  loadConfig(embeddingServiceConfigSchema, { KAFKA_BROKERS: '127.0.0.1:9092', ...env });
const issuesOf = (env: Record<string, string>): string[] => {
  try {
    load(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.issues;
    throw error;
  }
  return [];
};

describe('embedding-service config', () => {
  it('runs the local ONNX model by default, which needs its folder', () => {
    expect(load({ EMBEDDING_MODEL_DIR: '/models' })).toMatchObject({
      EMBEDDING_PROVIDER: 'onnx',
      EMBEDDING_MODEL: 'all-MiniLM-L6-v2',
    });
    expect(issuesOf({})).toEqual(['EMBEDDING_MODEL_DIR: required with EMBEDDING_PROVIDER=onnx']);
  });

  it('selects an OpenAI-compatible API, with defaults for the retry policy', () => {
    const config = load({
      EMBEDDING_PROVIDER: 'openai',
      EMBEDDING_API_URL: 'http://127.0.0.1:11434/v1',
      EMBEDDING_API_MODEL: 'nomic-embed-text',
      EMBEDDING_API_DIMENSIONS: '256',
      EMBEDDING_RATE_LIMIT_RPM: '3000',
    });
    expect(config).toMatchObject({
      EMBEDDING_PROVIDER: 'openai',
      EMBEDDING_API_DIMENSIONS: 256,
      EMBEDDING_API_TIMEOUT_MS: 30_000,
      EMBEDDING_API_MAX_RETRIES: 4,
      EMBEDDING_RATE_LIMIT_RPM: 3000,
    });
    expect(config.EMBEDDING_API_KEY).toBeUndefined();
    expect(config.EMBEDDING_MODEL_DIR).toBeUndefined();
  });

  it('names what the API provider is missing, and rejects bad values', () => {
    expect(issuesOf({ EMBEDDING_PROVIDER: 'openai' })).toEqual([
      'EMBEDDING_API_URL: required with EMBEDDING_PROVIDER=openai',
      'EMBEDDING_API_MODEL: required with EMBEDDING_PROVIDER=openai',
    ]);
    const issues = issuesOf({
      EMBEDDING_PROVIDER: 'openai',
      EMBEDDING_API_URL: 'not a url',
      EMBEDDING_API_MODEL: 'm',
      EMBEDDING_API_MAX_RETRIES: '-1',
      EMBEDDING_RATE_LIMIT_RPM: '0',
    });
    expect(issues.map((issue) => issue.split(':')[0])).toEqual([
      'EMBEDDING_API_URL',
      'EMBEDDING_API_MAX_RETRIES',
      'EMBEDDING_RATE_LIMIT_RPM',
    ]);
    expect(issuesOf({ EMBEDDING_PROVIDER: 'cohere' })[0]).toMatch(/^EMBEDDING_PROVIDER: /);
  });

  it('never puts the API key in an error message', () => {
    const issues = issuesOf({
      EMBEDDING_PROVIDER: 'openai',
      EMBEDDING_API_KEY: 'sk-secret-value',
      EMBEDDING_API_MODEL: 'm',
    });
    expect(issues.join('\n')).not.toContain('sk-secret-value');
  });
});
