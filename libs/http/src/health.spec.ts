import { DomainError, ErrorKind } from '@kb/errors';
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';

import { useRestDefaults } from './bootstrap';
import {
  HealthController,
  NotReadyError,
  Readiness,
  READINESS_CHECKS,
  type ReadinessCheck,
} from './health';

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

describe('GET /health/ready over HTTP, with details', () => {
  let app: INestApplication;
  let url: string;
  let indexUp = true;
  const checks: ReadinessCheck[] = [
    { name: 'index', check: async () => indexUp },
    {
      name: 'cross_encoder',
      check: async () => true,
      details: () => ({ configured: true, loaded: true, model: 'fake-cross-encoder' }),
    },
  ];

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      controllers: [HealthController],
      providers: [Readiness, { provide: READINESS_CHECKS, useValue: checks }],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    useRestDefaults(app);
    await app.listen(0, '127.0.0.1');
    url = `${(await app.getUrl()).replace('[::1]', '127.0.0.1')}/health/ready`;
  });
  afterAll(() => app.close());
  afterEach(() => (indexUp = true));

  it('reports each check, and the details of the checks that describe themselves', async () => {
    const response = await fetch(url);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      status: 'ready',
      checks: { index: true, cross_encoder: true },
      details: { cross_encoder: { configured: true, loaded: true, model: 'fake-cross-encoder' } },
    });
  });

  it('answers 503 not_ready with the checks and the details when a check fails', async () => {
    indexUp = false;
    const response = await fetch(url);
    expect(response.status).toBe(503);
    expect(await response.json()).toEqual({
      error: {
        code: 'not_ready',
        message: 'service is not ready',
        details: {
          checks: { index: false, cross_encoder: true },
          reasons: { index: 'not ready' },
          details: {
            cross_encoder: { configured: true, loaded: true, model: 'fake-cross-encoder' },
          },
        },
      },
    });
  });
});
