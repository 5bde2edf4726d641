import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { createDatabase, createPool, migrateToLatest } from '@kb/database';
import { leaseQueueConformance } from '@kb/jobs/test/support/lease-queue.conformance';
import { type Kysely, sql } from 'kysely';
import type { Pool } from 'pg';
import { Webhook } from 'standardwebhooks';

import type { WebhookConfig } from '../src/config/webhook.config';
import {
  type ClaimedDelivery,
  DeliveriesRepository,
} from '../src/deliveries/deliveries.repository';
import { DeliveryDispatcher } from '../src/deliveries/delivery.dispatcher';
import { DeliveryRetention } from '../src/deliveries/delivery.retention';
import { HttpReceiverSender } from '../src/deliveries/receiver.sender';
import { messageIdOf, type WebhookEvent } from '../src/deliveries/webhook-event.mapper';
import { migrations } from '../src/migrations';
import type { DB } from '../src/platform/db.generated';
import { WebhookSecretSealer } from '../src/webhooks/secret.sealer';
import { SecretBox } from '../src/webhooks/secret-box';
import { WebhooksRepository } from '../src/webhooks/webhooks.repository';
import { WebhooksService } from '../src/webhooks/webhooks.service';

jest.setTimeout(30_000);

/** A receiver on loopback that answers each path's requests from a script (then 200). */
class Receiver {
  readonly requests: Array<{ path: string; headers: Record<string, string>; body: string }> = [];
  private server?: Server;
  private readonly scripts = new Map<string, number[]>();
  url = '';

  script(path: string, statuses: number[]): string {
    this.scripts.set(path, [...statuses]);
    return `${this.url}${path}`;
  }

  async start(): Promise<void> {
    this.server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        const path = request.url ?? '/';
        this.requests.push({ path, headers: request.headers as Record<string, string>, body });
        response.writeHead(this.scripts.get(path)?.shift() ?? 200).end();
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }
}

const indexedEvent = (documentId: string, at: Date): WebhookEvent => ({
  type: 'document.indexed',
  messageId: messageIdOf('document.indexed', documentId, 1),
  occurredAt: at.toISOString(),
  data: { documentId, version: 1, chunkCount: 3 },
});

/** Subscriptions, the retry queue and the dispatcher over real Postgres and a real receiver. */
describe('webhooks on Postgres', () => {
  const schema = `webhook_test_${randomUUID().replace(/-/g, '').slice(0, 10)}`;
  const tenant = `t-${randomUUID().slice(0, 8)}`;
  let pool: Pool;
  let db: Kysely<DB>;
  // Starts at the real time: receivers refuse signatures more than five minutes off.
  let now = new Date();
  const clock = () => now;
  const receiver = new Receiver();
  let service: WebhooksService;
  let deliveries: DeliveriesRepository;
  const config = {
    WEBHOOK_ALLOW_PRIVATE_URLS: true,
    WEBHOOK_MAX_ATTEMPTS: 3,
    WEBHOOK_RETRY_BASE_MS: 1_000,
    WEBHOOK_RETRY_MAX_MS: 60_000,
    WEBHOOK_DISABLE_AFTER_FAILURES: 4,
    WEBHOOK_DISABLE_AFTER_MS: 0,
    WEBHOOK_TIMEOUT_MS: 2_000,
    WEBHOOK_DISPATCH_INTERVAL_MS: 60_000,
    WEBHOOK_DISPATCH_CONCURRENCY: 4,
    WEBHOOK_TENANT_CONCURRENCY: 4,
    WEBHOOK_MAX_PER_TENANT: 10,
  } as WebhookConfig;
  let dispatcher: DeliveryDispatcher;
  const key = randomBytes(32).toString('base64');
  const box = new SecretBox(key);

  /** Moves the clock past every retry wait and dispatches what is due, `rounds` times. */
  const dispatchRounds = async (rounds: number): Promise<void> => {
    for (let i = 0; i < rounds; i++) {
      await dispatcher.dispatchDue();
      now = new Date(now.getTime() + 120_000);
    }
  };

  beforeAll(async () => {
    pool = createPool({ url: process.env['DATABASE_URL']!, schema, maxConnections: 4 });
    db = createDatabase<DB>(pool);
    await migrateToLatest(db, schema, migrations);
    await receiver.start();
    deliveries = new DeliveriesRepository(db, box);
    service = new WebhooksService(new WebhooksRepository(db, box), deliveries, config, clock);
    dispatcher = new DeliveryDispatcher(
      deliveries,
      new HttpReceiverSender({ timeoutMs: 2_000, allowPrivate: true, userAgent: 'test' }),
      config,
      clock,
    );
  });

  afterAll(async () => {
    await receiver.stop();
    await sql`DROP SCHEMA ${sql.raw(schema)} CASCADE`.execute(db);
    await pool.end();
  });

  it('owes an event to the subscriptions of its type, in its tenant, once', async () => {
    const indexed = await service.create(tenant, {
      url: receiver.script('/a', []),
      events: ['document.indexed'],
      description: '',
    });
    await service.create(tenant, {
      url: receiver.script('/b', []),
      events: ['document.deleted'],
      description: '',
    });
    await service.create('another-tenant', {
      url: receiver.script('/c', []),
      events: ['document.indexed'],
      description: '',
    });
    now = new Date(now.getTime() + 1_000);
    const event = indexedEvent(randomUUID(), now);
    expect(await service.record(tenant, event)).toBe(1);
    // Kafka delivers it again: nothing more is owed.
    expect(await service.record(tenant, event)).toBe(0);
    // An event from before the subscription existed is not owed to it.
    expect(await service.record(tenant, indexedEvent(randomUUID(), new Date(0)))).toBe(0);

    await dispatchRounds(1);
    expect(receiver.requests.map((r) => r.path)).toEqual(['/a']);
    const [request] = receiver.requests;
    const verified = new Webhook(indexed.secret).verify(request!.body, request!.headers);
    expect(verified).toEqual({
      type: 'document.indexed',
      timestamp: event.occurredAt,
      data: event.data,
    });
    expect(request!.headers['webhook-id']).toBe(event.messageId);
    const [log] = await service.deliveriesOf(tenant, indexed.id, { limit: 10 });
    expect(log).toMatchObject({ status: 'succeeded', attemptCount: 1, nextAttemptAt: null });
    expect(log!.attempts).toEqual([
      expect.objectContaining({ attempt: 1, succeeded: true, statusCode: 200, error: null }),
    ]);
  });

  it('owes a consumed batch of events in one statement, each to its own tenant', async () => {
    const [t1, t2, t3] = [1, 2, 3].map(() => `t-${randomUUID().slice(0, 8)}`);
    const subscribe = (tenantId: string, path: string) =>
      service.create(tenantId, {
        url: receiver.script(path, []),
        events: ['document.indexed'],
        description: '',
      });
    const first = await subscribe(t1, '/batch-1a');
    const second = await subscribe(t1, '/batch-1b');
    const other = await subscribe(t2, '/batch-2');
    now = new Date(now.getTime() + 1_000);
    const [e1, e2, e3] = [1, 2, 3].map(() => indexedEvent(randomUUID(), now));
    expect(
      await service.recordAll([
        { tenantId: t1, event: e1! },
        { tenantId: t2, event: e2! },
        { tenantId: t1, event: e1! }, // the same message twice in one batch: owed once
        { tenantId: t3, event: e3! }, // a tenant without subscriptions
        { tenantId: t1, event: indexedEvent(randomUUID(), new Date(0)) }, // before they existed
      ]),
    ).toBe(3);
    expect(await service.recordAll([{ tenantId: t2, event: e2! }])).toBe(0); // redelivered
    expect(await service.recordAll([])).toBe(0);
    const owed = async (tenantId: string, webhookId: string) =>
      (await service.deliveriesOf(tenantId, webhookId, { limit: 10 })).map((d) => d.messageId);
    expect(await owed(t1, first.id)).toEqual([e1!.messageId]);
    expect(await owed(t1, second.id)).toEqual([e1!.messageId]);
    expect(await owed(t2, other.id)).toEqual([e2!.messageId]);
  });

  it('retries a failing receiver with the same message id and logs every try', async () => {
    const tenant = `t-${randomUUID().slice(0, 8)}`;
    const webhook = await service.create(tenant, {
      url: receiver.script('/flaky', [500, 503]),
      events: ['document.indexed'],
      description: 'fails twice',
    });
    now = new Date(now.getTime() + 1_000);
    await service.record(tenant, indexedEvent(randomUUID(), now));
    await dispatcher.dispatchDue();
    // Not due yet: the first retry waits about a second.
    await dispatcher.dispatchDue();
    const flaky = () => receiver.requests.filter((r) => r.path === '/flaky');
    expect(flaky()).toHaveLength(1);
    const [pending] = await service.deliveriesOf(tenant, webhook.id, { limit: 10 });
    expect(pending).toMatchObject({ status: 'pending', attemptCount: 1 });
    const wait = new Date(pending!.nextAttemptAt!).getTime() - now.getTime();
    // The first step is a second, half of it random (backoffDelay's equal jitter).
    expect(wait).toBeGreaterThanOrEqual(500);
    expect(wait).toBeLessThanOrEqual(1_000);

    await dispatchRounds(3);
    expect(flaky()).toHaveLength(3);
    expect(new Set(flaky().map((r) => r.headers['webhook-id'])).size).toBe(1);
    const [done] = await service.deliveriesOf(tenant, webhook.id, { limit: 10 });
    expect(done!.status).toBe('succeeded');
    expect(done!.attempts.map((a) => [a.attempt, a.statusCode, a.succeeded])).toEqual([
      [1, 500, false],
      [2, 503, false],
      [3, 200, true],
    ]);
    expect(done!.attempts[0]!.error).toBe('receiver answered HTTP 500');
    for (const attempt of done!.attempts) expect(attempt.durationMs).toBeGreaterThanOrEqual(0);
    // The success reset the failures in a row.
    expect((await service.get(tenant, webhook.id)).consecutiveFailures).toBe(0);
  });

  it('gives a delivery up after the last try, and disables a subscription failing in a row', async () => {
    const tenant = `t-${randomUUID().slice(0, 8)}`;
    const webhook = await service.create(tenant, {
      url: receiver.script('/down', Array<number>(20).fill(500)),
      events: ['document.indexed'],
      description: '',
    });
    now = new Date(now.getTime() + 1_000);
    await service.record(tenant, indexedEvent(randomUUID(), now));
    await dispatchRounds(4);
    const [given] = await service.deliveriesOf(tenant, webhook.id, { limit: 10 });
    expect(given).toMatchObject({ status: 'failed', attemptCount: 3, nextAttemptAt: null });
    expect((await service.get(tenant, webhook.id)).enabled).toBe(true);

    await service.record(tenant, indexedEvent(randomUUID(), now));
    await dispatchRounds(4);
    const disabled = await service.get(tenant, webhook.id);
    expect(disabled).toMatchObject({ enabled: false, consecutiveFailures: 4 });
    expect(disabled.disabledReason).toMatch(/disabled after 4 or more failed tries in a row/);
    const [stopped] = await service.deliveriesOf(tenant, webhook.id, { limit: 10 });
    // The fourth failure disabled it: its second delivery is left pending, not tried again.
    expect(stopped).toMatchObject({ status: 'pending', attemptCount: 1 });
    // Disabled subscriptions are owed nothing new.
    expect(await service.record(tenant, indexedEvent(randomUUID(), now))).toBe(0);

    // Re-enabled by an admin: the count restarts and the pending delivery goes on.
    const enabled = await service.update(tenant, webhook.id, { enabled: true });
    expect(enabled).toMatchObject({ enabled: true, consecutiveFailures: 0, disabledReason: null });
    await dispatchRounds(1);
    const [resumed] = await service.deliveriesOf(tenant, webhook.id, { limit: 10 });
    expect(resumed!.attemptCount).toBe(2);
  });

  it('disables only when the failures in a row have also lasted long enough', async () => {
    const tenant = `t-${randomUUID().slice(0, 8)}`;
    const patient = new DeliveryDispatcher(
      deliveries,
      new HttpReceiverSender({ timeoutMs: 2_000, allowPrivate: true, userAgent: 'test' }),
      { ...config, WEBHOOK_DISABLE_AFTER_MS: 3_600_000 },
      clock,
    );
    const webhook = await service.create(tenant, {
      url: receiver.script('/restarting', Array<number>(40).fill(502)),
      events: ['document.indexed'],
      description: '',
    });
    now = new Date(now.getTime() + 1_000);
    for (let i = 0; i < 3; i++) await service.record(tenant, indexedEvent(randomUUID(), now));
    // Nine failures within minutes: a burst, not a receiver gone for good.
    for (let round = 0; round < 4; round++) {
      await patient.dispatchDue();
      now = new Date(now.getTime() + 120_000);
    }
    expect(await service.get(tenant, webhook.id)).toMatchObject({
      enabled: true,
      consecutiveFailures: 9,
    });
    // An hour after the first failure, the next one disables it.
    now = new Date(now.getTime() + 3_600_000);
    await service.record(tenant, indexedEvent(randomUUID(), now));
    await patient.dispatchDue();
    expect(await service.get(tenant, webhook.id)).toMatchObject({
      enabled: false,
      consecutiveFailures: 10,
    });
  });

  it('hands each due delivery to one claimer only', async () => {
    const webhook = await service.create(tenant, {
      url: receiver.script('/claims', []),
      events: ['document.deleted'],
      description: '',
    });
    now = new Date(now.getTime() + 1_000);
    for (let i = 0; i < 6; i++) {
      await service.record(tenant, {
        type: 'document.deleted',
        messageId: messageIdOf('claims', i),
        occurredAt: now.toISOString(),
        data: { documentId: randomUUID() },
      });
    }
    const claims = await Promise.all([1, 2, 3].map(() => deliveries.claimDue(now, 50, 30_000)));
    const ids = claims
      .flat()
      .filter((d) => d.webhookId === webhook.id)
      .map((d) => d.id);
    expect(ids).toHaveLength(6);
    expect(new Set(ids).size).toBe(6);
    // Leased: nothing is due again until the lease ends.
    expect(
      (await deliveries.claimDue(now, 10, 30_000)).filter((d) => d.webhookId === webhook.id),
    ).toEqual([]);
  });

  it('signs with the old and the new secret during a rotation\u2019s grace, then the new one only', async () => {
    // Receivers check the timestamp against their own clock: sign at the real time.
    now = new Date();
    const webhook = await service.create(tenant, {
      url: receiver.script('/rotating', []),
      events: ['document.indexed'],
      description: '',
    });
    const rotated = await service.rotateSecret(tenant, webhook.id, { graceSeconds: 3_600 });
    expect(rotated.secret).not.toBe(webhook.secret);
    expect(rotated.previousSecretExpiresAt).toBe(new Date(now.getTime() + 3_600_000).toISOString());
    expect(await service.get(tenant, webhook.id)).toMatchObject({
      secretRotatedAt: now.toISOString(),
      previousSecretExpiresAt: rotated.previousSecretExpiresAt,
    });

    const received = async (documentId: string) => {
      await service.record(tenant, indexedEvent(documentId, now));
      await dispatcher.dispatchDue();
      const request = receiver.requests.filter((r) => r.path === '/rotating').at(-1)!;
      expect(JSON.parse(request.body)).toMatchObject({ data: { documentId } });
      return request;
    };
    const during = await received(randomUUID());
    expect(during.headers['webhook-signature']!.split(' ')).toHaveLength(2);
    for (const secret of [webhook.secret, rotated.secret]) {
      expect(() => new Webhook(secret).verify(during.body, during.headers)).not.toThrow();
    }

    // Past the grace period only the new secret signs.
    now = new Date(now.getTime() + 3_600_001);
    const after = await received(randomUUID());
    expect(after.headers['webhook-signature']!.split(' ')).toHaveLength(1);
    // Signed an hour ahead of real time, so compare signatures rather than verify (tolerance).
    const signedAt = new Date(Number(after.headers['webhook-timestamp']) * 1000);
    expect(
      new Webhook(rotated.secret).sign(after.headers['webhook-id']!, signedAt, after.body),
    ).toBe(after.headers['webhook-signature']);
    expect(
      new Webhook(webhook.secret).sign(after.headers['webhook-id']!, signedAt, after.body),
    ).not.toBe(after.headers['webhook-signature']);

    // Grace 0: the replaced secret stops signing at once; a rotation needs the tenant's webhook.
    now = new Date();
    const immediate = await service.rotateSecret(tenant, webhook.id, { graceSeconds: 0 });
    expect(immediate.previousSecretExpiresAt).toBeNull();
    const next = await received(randomUUID());
    expect(() => new Webhook(immediate.secret).verify(next.body, next.headers)).not.toThrow();
    expect(() => new Webhook(rotated.secret).verify(next.body, next.headers)).toThrow();
    await expect(
      service.rotateSecret('another-tenant', webhook.id, { graceSeconds: 0 }),
    ).rejects.toMatchObject({ code: 'webhook_not_found' });
    await expect(
      service.rotateSecret(tenant, webhook.id, { secret: 'whsec_short', graceSeconds: 0 }),
    ).rejects.toMatchObject({ code: 'invalid_webhook_secret' });
    await service.delete(tenant, webhook.id);
  });

  it('stores signing secrets encrypted, never echoes them, and still signs with them', async () => {
    now = new Date();
    const webhook = await service.create(tenant, {
      url: receiver.script('/sealed', []),
      events: ['document.indexed'],
      description: '',
    });
    const rotated = await service.rotateSecret(tenant, webhook.id, { graceSeconds: 600 });
    const stored = async () =>
      (
        await sql<{ secret: string; previous_secret: string | null }>`
          SELECT secret, previous_secret FROM webhooks WHERE id = ${webhook.id}`.execute(db)
      ).rows[0]!;
    const row = await stored();
    const body = (value: string) => value.slice('whsec_'.length);
    for (const [column, plain] of [
      [row.secret, rotated.secret],
      [row.previous_secret!, webhook.secret],
    ] as const) {
      expect(column).toMatch(/^kbsec:v1:[0-9a-f]{12}:/);
      expect(column).not.toContain(body(plain));
      expect(column).not.toContain(Buffer.from(body(plain), 'base64').toString('hex'));
    }
    // Shown once: no later answer carries either secret.
    const later = JSON.stringify([
      await service.get(tenant, webhook.id),
      await service.list(tenant),
      await service.update(tenant, webhook.id, { description: 'sealed' }),
      await service.deliveriesOf(tenant, webhook.id, { limit: 10 }),
    ]);
    for (const plain of [webhook.secret, rotated.secret]) expect(later).not.toContain(body(plain));

    // Deliveries are signed with the secrets as given: each verifies.
    const documentId = randomUUID();
    await service.record(tenant, indexedEvent(documentId, now));
    await dispatcher.dispatchDue();
    const request = receiver.requests.filter((r) => r.path === '/sealed').at(-1)!;
    for (const plain of [webhook.secret, rotated.secret]) {
      expect(new Webhook(plain).verify(request.body, request.headers)).toMatchObject({
        data: { documentId },
      });
    }
    await service.delete(tenant, webhook.id);
  });

  it('seals plaintext secrets stored before encryption, and re-seals them after a key rotation', async () => {
    now = new Date();
    const webhook = await service.create(tenant, {
      url: receiver.script('/legacy', []),
      events: ['document.indexed'],
      description: '',
    });
    // As stored before encryption: the secret and a previous one (in its grace) in plaintext,
    // and another subscription's previous secret whose grace has ended.
    const [secret, previous] = [1, 2].map(() => `whsec_${randomBytes(32).toString('base64')}`);
    await sql`UPDATE webhooks SET secret = ${secret}, previous_secret = ${previous},
                     previous_secret_expires_at = ${new Date(now.getTime() + 600_000)}
               WHERE id = ${webhook.id}`.execute(db);
    const expired = await service.create(tenant, {
      url: receiver.script('/expired', []),
      events: ['document.deleted'],
      description: '',
    });
    await sql`UPDATE webhooks SET previous_secret = ${previous},
                     previous_secret_expires_at = ${new Date(now.getTime() - 1_000)}
               WHERE id = ${expired.id}`.execute(db);
    const stored = async (id: string) =>
      (
        await sql<{ secret: string; previous_secret: string | null }>`
          SELECT secret, previous_secret FROM webhooks WHERE id = ${id}`.execute(db)
      ).rows[0]!;
    const signsWithBoth = async (dispatch: DeliveryDispatcher) => {
      const documentId = randomUUID();
      await service.record(tenant, indexedEvent(documentId, now));
      await dispatch.dispatchDue();
      const request = receiver.requests.filter((r) => r.path === '/legacy').at(-1)!;
      expect(JSON.parse(request.body)).toMatchObject({ data: { documentId } });
      for (const plain of [secret, previous]) {
        expect(() => new Webhook(plain!).verify(request.body, request.headers)).not.toThrow();
      }
    };
    // Not sealed yet: the plaintext still signs.
    await signsWithBoth(dispatcher);

    const sealer = new WebhookSecretSealer(new WebhooksRepository(db, box), clock);
    expect(await sealer.seal()).toBeGreaterThanOrEqual(1);
    const sealed = await stored(webhook.id);
    expect(sealed.secret).toMatch(new RegExp(`^kbsec:v1:${box.keyId}:`));
    expect(sealed.previous_secret).toMatch(new RegExp(`^kbsec:v1:${box.keyId}:`));
    expect(JSON.stringify(sealed)).not.toContain(secret!.slice(6));
    expect((await stored(expired.id)).previous_secret).toBeNull();
    expect(await sealer.seal()).toBe(0);
    await signsWithBoth(dispatcher);

    // A new key, the old one kept as a previous key: what it sealed still opens, then is re-sealed.
    const rotatedKey = randomBytes(32).toString('base64');
    const rotatedBox = new SecretBox(rotatedKey, [key]);
    const rotatedDispatcher = new DeliveryDispatcher(
      new DeliveriesRepository(db, rotatedBox),
      new HttpReceiverSender({ timeoutMs: 2_000, allowPrivate: true, userAgent: 'test' }),
      config,
      clock,
    );
    await signsWithBoth(rotatedDispatcher);
    const resealer = new WebhookSecretSealer(new WebhooksRepository(db, rotatedBox), clock);
    expect(await resealer.seal()).toBeGreaterThanOrEqual(2);
    expect((await stored(webhook.id)).secret).toMatch(new RegExp(`^kbsec:v1:${rotatedBox.keyId}:`));
    await signsWithBoth(rotatedDispatcher);
    // Without the key that sealed them, secrets do not open: nothing is sent, no try is used up.
    const owed = indexedEvent(randomUUID(), now);
    await service.record(tenant, owed);
    const sent = receiver.requests.length;
    await dispatcher.dispatchDue();
    expect(receiver.requests.length).toBe(sent);
    const log = await service.deliveriesOf(tenant, webhook.id, { limit: 100 });
    expect(log.find((d) => d.messageId === owed.messageId)).toMatchObject({
      status: 'pending',
      attemptCount: 0,
    });
    await service.delete(tenant, webhook.id);
    await service.delete(tenant, expired.id);
    // Back to the first key for the tests that follow (the rotation re-sealed every subscription).
    const back = new SecretBox(key, [rotatedKey]);
    expect(
      await new WebhookSecretSealer(new WebhooksRepository(db, back), clock).seal(),
    ).toBeGreaterThan(0);
  });

  it('prunes finished deliveries past the retention period with their tries, never pending ones', async () => {
    now = new Date();
    const webhook = await service.create(tenant, {
      url: receiver.script('/retained', []),
      events: ['document.indexed'],
      description: '',
    });
    const ids = [randomUUID(), randomUUID(), randomUUID()];
    for (const id of ids) await service.record(tenant, indexedEvent(id, now));
    await dispatcher.dispatchDue();
    const log = await service.deliveriesOf(tenant, webhook.id, { limit: 10 });
    expect(log.map((d) => d.status)).toEqual(['succeeded', 'succeeded', 'succeeded']);
    // One finished 40 days ago, one 10 days ago; a fourth is still pending from 40 days ago.
    const [old, recent] = log;
    const daysAgo = (days: number) => new Date(now.getTime() - days * 86_400_000);
    await sql`UPDATE deliveries SET updated_at = ${daysAgo(40)} WHERE id = ${old!.id}`.execute(db);
    await sql`UPDATE deliveries SET updated_at = ${daysAgo(10)} WHERE id = ${recent!.id}`.execute(
      db,
    );
    await service.record(tenant, indexedEvent(randomUUID(), now));
    await sql`UPDATE deliveries SET updated_at = ${daysAgo(40)}, next_attempt_at = ${daysAgo(-1)}
               WHERE webhook_id = ${webhook.id} AND status = 'pending'`.execute(db);

    const retention = new DeliveryRetention(
      deliveries,
      { WEBHOOK_DELIVERY_RETENTION_DAYS: 30, WEBHOOK_RETENTION_INTERVAL_MS: 60_000 },
      clock,
    );
    // Other tests' deliveries are recent: only the 40-day-old finished one goes.
    expect(await retention.prune()).toBe(1);
    const left = await service.deliveriesOf(tenant, webhook.id, { limit: 10 });
    expect(left.map((d) => d.id)).not.toContain(old!.id);
    expect(left.map((d) => d.id)).toContain(recent!.id);
    expect(left.filter((d) => d.status === 'pending')).toHaveLength(1);
    const { rows } = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM delivery_attempts WHERE delivery_id = ${old!.id}`.execute(db);
    expect(rows[0]!.n).toBe(0);
    expect(await retention.prune()).toBe(0);
    await service.delete(tenant, webhook.id);
  });

  it('refuses a subscription past the per-tenant limit, also when created concurrently', async () => {
    const crowded = `t-${randomUUID().slice(0, 8)}`;
    const create = () =>
      service.create(crowded, {
        url: receiver.script('/crowded', []),
        events: ['document.indexed'],
        description: '',
      });
    for (let i = 0; i < 7; i++) await create();
    // Six at once for the last three places: three are refused, whatever the interleaving.
    const racing = await Promise.allSettled(Array.from({ length: 6 }, create));
    expect(racing.filter((r) => r.status === 'fulfilled')).toHaveLength(3);
    for (const refused of racing.filter((r) => r.status === 'rejected')) {
      expect((refused as PromiseRejectedResult).reason).toMatchObject({
        code: 'webhook_limit_reached',
        kind: 'failed_precondition',
      });
    }
    expect(await service.list(crowded)).toHaveLength(10);
    // Another tenant is not counted; a deletion frees a place.
    await expect(
      service.create(`t-${randomUUID().slice(0, 8)}`, {
        url: receiver.script('/elsewhere', []),
        events: ['document.indexed'],
        description: '',
      }),
    ).resolves.toMatchObject({ enabled: true });
    await service.delete(crowded, (await service.list(crowded))[0]!.id);
    await expect(create()).resolves.toMatchObject({ enabled: true });
  });

  it('keeps tenants apart and answers not found for another tenant\u2019s webhook', async () => {
    const [mine] = await service.list(tenant);
    await expect(service.get('another-tenant', mine!.id)).rejects.toMatchObject({
      code: 'webhook_not_found',
    });
    await expect(
      service.deliveriesOf('another-tenant', mine!.id, { limit: 5 }),
    ).rejects.toMatchObject({ code: 'webhook_not_found' });
    await expect(service.delete('another-tenant', mine!.id)).rejects.toMatchObject({
      code: 'webhook_not_found',
    });
    expect((await service.list('another-tenant')).map((w) => w.url)).toEqual([`${receiver.url}/c`]);
    await expect(service.delete(tenant, mine!.id)).resolves.toEqual({ id: mine!.id });
    expect((await service.list(tenant)).some((w) => w.id === mine!.id)).toBe(false);
  });

  describe('deliveries as a lease queue', () => {
    let at = new Date();
    leaseQueueConformance<ClaimedDelivery>(async () => {
      // Emptied: no delivery of an earlier test is due.
      await sql`UPDATE deliveries SET status = 'failed' WHERE status = 'pending'`.execute(db);
      const owner = `q-${randomUUID().slice(0, 8)}`;
      await service.create(owner, {
        url: receiver.script('/queue', []),
        events: ['document.deleted'],
        description: '',
      });
      at = new Date(Math.max(at.getTime(), Date.now()) + 1_000);
      return {
        queue: { claim: (limit, leaseMs) => deliveries.claimDue(at, limit, leaseMs) },
        add: async (count) => {
          const messageIds = Array.from({ length: count }, (_, n) =>
            messageIdOf('queue', owner, n),
          );
          for (const messageId of messageIds) {
            await service.record(owner, {
              type: 'document.deleted',
              messageId,
              occurredAt: new Date().toISOString(),
              data: { documentId: randomUUID() },
            });
          }
          const rows = await db
            .selectFrom('deliveries')
            .select('id')
            .where('tenant_id', '=', owner)
            .where('message_id', 'in', messageIds)
            .execute();
          return rows.map((row) => row.id);
        },
        idOf: (delivery) => delivery.id,
        finish: async (delivery) =>
          void (await deliveries.recordAttempt(
            delivery,
            { succeeded: true, statusCode: 200, error: null, durationMs: 1, at },
            undefined,
            { failures: 4, afterMs: 0 },
          )),
        elapse: async (ms) => Promise.resolve(void (at = new Date(at.getTime() + ms))),
      };
    });
  });
});
