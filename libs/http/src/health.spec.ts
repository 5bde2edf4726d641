import { DomainError, ErrorKind } from '@kb/errors';

import { HealthController, NotReadyError, Readiness, type ReadinessCheck } from './health';

const refused = () =>
  Object.assign(new Error('connect ECONNREFUSED 10.0.3.7:5432'), { code: 'ECONNREFUSED' });

function controller(checks: ReadinessCheck[]): HealthController {
  return new HealthController(new Readiness(checks));
}

describe('GET /health/ready', () => {
  it('is ready while every critical check passes, and names a degraded optional one', async () => {
    const ready = await controller([
      { name: 'postgres', check: async () => true },
      { name: 'redis', critical: false, check: async () => false },
    ]).ready();
    expect(ready).toEqual({
      status: 'ready',
      checks: { postgres: true, redis: false },
      degraded: { redis: 'not ready' },
    });
  });

  it('answers not_ready with a reason per failed check, without hosts or ports', async () => {
    const error: unknown = await controller([
      { name: 'postgres', check: async () => Promise.reject(refused()) },
      { name: 's3', check: async () => true },
      {
        name: 'kafka-consumer',
        check: async () => {
          throw new DomainError('consumer_not_ready', ErrorKind.Unavailable, 'crashed');
        },
      },
    ])
      .ready()
      .catch((e: unknown) => e);
    expect(error).toMatchObject({
      code: 'not_ready',
      details: {
        checks: { postgres: false, s3: true, 'kafka-consumer': false },
        reasons: { postgres: 'unreachable (ECONNREFUSED)', 'kafka-consumer': 'crashed' },
      },
    });
    expect(JSON.stringify((error as DomainError).details)).not.toContain('10.0.3.7');
  });

  it('fails a check that hangs (a dependency that accepts and never answers)', async () => {
    jest.useFakeTimers();
    try {
      const pending = controller([{ name: 's3', check: () => new Promise<boolean>(() => {}) }])
        .ready()
        .catch((e: unknown) => e);
      await jest.advanceTimersByTimeAsync(2_001);
      expect(await pending).toMatchObject({
        details: { reasons: { s3: expect.stringContaining('no answer within') } },
      });
    } finally {
      jest.useRealTimers();
    }
  });

  it('shows a NotReadyError’s own message', async () => {
    const error = await controller([
      { name: 'x', check: async () => Promise.reject(new NotReadyError('migrations pending')) },
    ])
      .ready()
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ details: { reasons: { x: 'migrations pending' } } });
  });
});
