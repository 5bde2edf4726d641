import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';

import { useRestDefaults } from './bootstrap';
import { HealthController, Readiness, READINESS_CHECKS, type ReadinessCheck } from './health';

describe('GET /health/ready', () => {
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
          details: {
            cross_encoder: { configured: true, loaded: true, model: 'fake-cross-encoder' },
          },
        },
      },
    });
  });
});
