import { z } from 'zod';

import { baseConfigSchema, ConfigError, env, kafkaConfigSchema, loadConfig } from './index';

describe('loadConfig', () => {
  const schema = baseConfigSchema.extend(kafkaConfigSchema.shape).extend({
    PORT: env.port(3000),
    DATABASE_URL: env.url(),
    MIGRATE: env.bool(true),
  });

  it('applies defaults and coerces types', () => {
    const config = loadConfig(schema, {
      KAFKA_BROKERS: 'a:1, b:2',
      DATABASE_URL: 'postgres://x/y',
    });
    expect(config).toMatchObject({
      PORT: 3000,
      MIGRATE: true,
      LOG_LEVEL: 'info',
      KAFKA_BROKERS: ['a:1', 'b:2'],
    });
    expect(
      loadConfig(schema, {
        KAFKA_BROKERS: 'a',
        DATABASE_URL: 'postgres://x/y',
        MIGRATE: 'false',
        PORT: '8080',
      }),
    ).toMatchObject({ PORT: 8080, MIGRATE: false });
  });

  it('reports every bad variable by name in one error', () => {
    let error: unknown;
    try {
      loadConfig(schema, { PORT: 'eighty', DATABASE_URL: 'not a url' });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const issues = (error as ConfigError).issues.join('\n');
    expect(issues).toMatch(/^PORT: /m);
    expect(issues).toMatch(/^DATABASE_URL: /m);
    expect(issues).toMatch(/^KAFKA_BROKERS: /m);
  });

  it('works with any zod object', () => {
    expect(loadConfig(z.object({ A: z.string() }), { A: 'x' })).toEqual({ A: 'x' });
  });
});
