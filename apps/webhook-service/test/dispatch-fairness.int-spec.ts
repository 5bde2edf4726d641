import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { createDatabase, createPool, migrateToLatest } from '@kb/database';
import { type Kysely, sql } from 'kysely';
import type { Pool } from 'pg';

import type { WebhookConfig } from '../src/config/webhook.config';
import { DeliveriesRepository } from '../src/deliveries/deliveries.repository';
import { DeliveryDispatcher } from '../src/deliveries/delivery.dispatcher';
import { HttpReceiverSender } from '../src/deliveries/receiver.sender';
import { messageIdOf, type WebhookEvent } from '../src/deliveries/webhook-event.mapper';
import { migrations } from '../src/migrations';
import type { DB } from '../src/platform/db.generated';
import { SecretBox } from '../src/webhooks/secret-box';
import { WebhooksRepository } from '../src/webhooks/webhooks.repository';
import { WebhooksService } from '../src/webhooks/webhooks.service';

jest.setTimeout(60_000);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A receiver on 127.0.0.1 (like test/support/webhook-receiver.ts, which an app's tests may not
 * import): records each request with when it arrived; `slow` paths answer 200 only after a
 * delay (a tarpit), the others at once.
 */
class Receiver {
  readonly requests: Array<{ path: string; headers: Record<string, string>; receivedAt: number }> =
    [];
  private readonly delays = new Map<string, number>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private server?: Server;
  url = '';

  slow(path: string, ms: number): string {
    this.delays.set(path, ms);
    return `${this.url}${path}`;
  }

  at(path: string) {
    return this.requests.filter((r) => r.path === path);
  }

  async start(): Promise<void> {
    this.server = createServer((request, response) => {
      request.resume();
      request.on('end', () => {
        const path = request.url ?? '/';
        const headers = request.headers as Record<string, string>;
        this.requests.push({ path, headers, receivedAt: Date.now() });
        const timer = setTimeout(
          () => {
            this.timers.delete(timer);
            if (!response.destroyed) response.writeHead(200).end();
          },
          this.delays.get(path) ?? 0,
        );
        this.timers.add(timer);
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    for (const timer of this.timers) clearTimeout(timer);
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }
}

const event = (tenant: string, n: number): WebhookEvent => ({
  type: 'document.indexed',
  messageId: messageIdOf('fairness', tenant, n, randomUUID()),
  occurredAt: new Date().toISOString(),
  data: { documentId: randomUUID(), version: 1, chunkCount: 1 },
});

/**
 * Review N7: one tenant's receivers answering after 10 s (a tarpit) on every call, with far more
 * deliveries queued than the dispatcher sends at once, must not hold up another tenant's. Real
 * Postgres, the real HTTP sender and a real receiver on 127.0.0.1 (private receivers allowed, as
 * in every webhook test), the dispatcher running on its own timer as in the service.
 */
describe('webhook dispatch fairness across tenants', () => {
  const schema = `webhook_fair_${randomUUID().replace(/-/g, '').slice(0, 10)}`;
  const slowTenant = `a-${randomUUID().slice(0, 8)}`;
  const fastTenant = `b-${randomUUID().slice(0, 8)}`;
  let pool: Pool;
  let db: Kysely<DB>;
  const receiver = new Receiver();
  let service: WebhooksService;
  let deliveries: DeliveriesRepository;
  let dispatcher: DeliveryDispatcher;
  const config = {
    WEBHOOK_ALLOW_PRIVATE_URLS: true,
    WEBHOOK_MAX_ATTEMPTS: 8,
    WEBHOOK_RETRY_BASE_MS: 30_000,
    WEBHOOK_RETRY_MAX_MS: 60_000,
    WEBHOOK_DISABLE_AFTER_FAILURES: 20,
    WEBHOOK_DISABLE_AFTER_MS: 86_400_000,
    WEBHOOK_TIMEOUT_MS: 10_000,
    WEBHOOK_DISPATCH_INTERVAL_MS: 100,
    WEBHOOK_DISPATCH_CONCURRENCY: 16,
    WEBHOOK_TENANT_CONCURRENCY: 4,
    WEBHOOK_MAX_PER_TENANT: 25,
  } as WebhookConfig;
  const clock = () => new Date();

  beforeAll(async () => {
    pool = createPool({ url: process.env['DATABASE_URL']!, schema, maxConnections: 6 });
    db = createDatabase<DB>(pool);
    await migrateToLatest(db, schema, migrations);
    await receiver.start();
    const box = new SecretBox(randomBytes(32).toString('base64'));
    deliveries = new DeliveriesRepository(db, box);
    service = new WebhooksService(new WebhooksRepository(db, box), deliveries, config, clock);
    dispatcher = new DeliveryDispatcher(
      deliveries,
      new HttpReceiverSender({
        timeoutMs: config.WEBHOOK_TIMEOUT_MS,
        allowPrivate: true,
        userAgent: 'test',
      }),
      config,
      clock,
    );
  });

  afterAll(async () => {
    // Closing the tarpits' connections ends the tries in flight at once.
    await receiver.stop();
    await dispatcher.beforeApplicationShutdown();
    await sql`DROP SCHEMA ${sql.raw(schema)} CASCADE`.execute(db);
    await pool.end();
  });

  it('claims oldest due first tenant by tenant, and no more than a tenant\u2019s share in flight', async () => {
    const [busy, quiet] = [`c-${randomUUID().slice(0, 8)}`, `d-${randomUUID().slice(0, 8)}`];
    const subscribe = (tenant: string) =>
      service.create(tenant, {
        url: `${receiver.url}/claims-${tenant}`,
        events: ['document.deleted'],
        description: '',
      });
    const owe = async (tenant: string, count: number) => {
      for (let n = 0; n < count; n++) {
        await service.record(tenant, {
          type: 'document.deleted',
          messageId: messageIdOf('claims', tenant, n),
          occurredAt: new Date().toISOString(),
          data: { documentId: randomUUID() },
        });
      }
    };
    await subscribe(busy);
    await subscribe(quiet);
    await sleep(5);
    // The busy tenant's ten are older than the quiet tenant's two.
    await owe(busy, 10);
    await owe(quiet, 2);
    const later = new Date(Date.now() + 1_000);
    const tenantsOf = (claimed: Array<{ tenantId: string }>) =>
      claimed.map((d) => d.tenantId).filter((t) => t === busy || t === quiet);
    const first = await deliveries.claimDue(later, 4, 30_000, 3);
    // Round-robin: each tenant's oldest, then each one's second, then the busy tenant's third.
    expect(tenantsOf(first).sort()).toEqual([busy, busy, quiet, quiet].sort());
    const second = await deliveries.claimDue(later, 10, 30_000, 3);
    expect(tenantsOf(second)).toEqual([busy]);
    // Three of the busy tenant's in flight: nothing more of it until one is logged.
    expect(tenantsOf(await deliveries.claimDue(later, 10, 30_000, 3))).toEqual([]);
    const done = [...first, ...second].find((d) => d.tenantId === busy)!;
    await deliveries.recordAttempt(
      done,
      { succeeded: true, statusCode: 200, error: null, durationMs: 1, at: later },
      undefined,
      { failures: 20, afterMs: 0 },
    );
    expect(tenantsOf(await deliveries.claimDue(later, 10, 30_000, 3))).toEqual([busy]);
    // Leases that ran out (their replica died) no longer count: those deliveries are due again.
    const afterLeases = new Date(later.getTime() + 31_000);
    expect(tenantsOf(await deliveries.claimDue(afterLeases, 10, 30_000, 3))).toEqual([
      busy,
      quiet,
      busy,
      quiet,
      busy,
    ]);
  });

  it("delivers tenant B's events within 2 s (p95) while tenant A's receivers take 10 s each", async () => {
    // Tenant A: 8 subscriptions on tarpits, 6 events: 48 deliveries, three times what is sent at once.
    for (let i = 0; i < 8; i++) {
      await service.create(slowTenant, {
        url: receiver.slow(`/tarpit-${i}`, 10_000),
        events: ['document.indexed'],
        description: 'answers after 10 s',
      });
    }
    for (let n = 0; n < 6; n++) await service.record(slowTenant, event(slowTenant, n));
    await service.create(fastTenant, {
      url: `${receiver.url}/fast`,
      events: ['document.indexed'],
      description: '',
    });

    dispatcher.onApplicationBootstrap();
    // A's tries are in flight before B has anything to send.
    await sleep(500);
    const sentAt = new Map<string, number>();
    for (let n = 0; n < 20; n++) {
      const owed = event(fastTenant, n);
      await service.record(fastTenant, owed);
      sentAt.set(owed.messageId, Date.now());
      await sleep(150);
    }
    const arrived = () => receiver.at('/fast').length;
    for (const deadline = Date.now() + 4_000; arrived() < 20 && Date.now() < deadline;) {
      await sleep(100);
    }

    const latencies = [...sentAt].map(([messageId, at]) => {
      const request = receiver.at('/fast').find((r) => r.headers['webhook-id'] === messageId);
      return request ? request.receivedAt - at : Number.POSITIVE_INFINITY;
    });
    latencies.sort((a, b) => a - b);
    const p95 = latencies[Math.ceil(latencies.length * 0.95) - 1]!;
    expect({ arrived: arrived(), p95Below2s: p95 <= 2_000 }).toEqual({
      arrived: 20,
      p95Below2s: true,
    });
    // A's tarpits were being tried meanwhile, never with more than its share at once.
    const tarpitted = receiver.requests.filter((r) => r.path.startsWith('/tarpit-'));
    expect(tarpitted.length).toBe(config.WEBHOOK_TENANT_CONCURRENCY);
  });
});
