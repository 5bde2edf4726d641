import { createServer } from 'node:net';

import { stubApi } from '../testing/run-command';
import { formatStatus, readinessOf } from './status.command';

describe('kb status', () => {
  it('reads ready, degraded, not ready and unreachable from GET /health/ready', async () => {
    const ready = await stubApi(() => ({
      status: 200,
      body: {
        status: 'ready',
        checks: { db: true, cache: false },
        degraded: { cache: 'unreachable (ECONNREFUSED)' },
      },
    }));
    const notReady = await stubApi(() => ({
      status: 503,
      body: {
        error: {
          code: 'not_ready',
          message: 'service is not ready',
          details: { checks: { kafka: false }, reasons: { kafka: 'unreachable (ETIMEDOUT)' } },
        },
      },
    }));
    // A port nothing listens on: taken, then released.
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const closedPort = (probe.address() as { port: number }).port;
    await new Promise((resolve) => probe.close(resolve));
    try {
      const statuses = [
        await readinessOf('query-service', ready.url),
        await readinessOf('indexing-service', notReady.url),
        await readinessOf('acl-service', `http://127.0.0.1:${closedPort}`),
      ];
      expect(ready.seen[0]!.url).toBe('/health/ready');
      expect(statuses.map((s) => [s.status, s.reasons])).toEqual([
        ['ready', { cache: 'unreachable (ECONNREFUSED)' }],
        ['not ready', { kafka: 'unreachable (ETIMEDOUT)' }],
        ['unreachable', {}],
      ]);
      const table = formatStatus(statuses).split('\n');
      expect(table[0]).toMatch(/^service +url +status +reasons$/);
      expect(table[3]).toMatch(/not ready +kafka: unreachable \(ETIMEDOUT\)$/);
    } finally {
      await Promise.all([ready.close(), notReady.close()]);
    }
  });
});
