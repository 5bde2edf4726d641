import { execFile } from 'node:child_process';
import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

import { Topics, webhookEventDataSchemas, type WebhookEventType } from '@kb/contracts';
import { createKafka, KafkaEventProducer } from '@kb/kafka';
import { Webhook } from 'standardwebhooks';

import { MISSIONS_DOCUMENT, useSuite } from '../support/suite';
import { waitFor } from '../support/wait';
import { type ReceivedRequest, WebhookReceiver } from '../support/webhook-receiver';

jest.setTimeout(300_000);

const run = promisify(execFile);
const CLI = join(__dirname, '..', '..', 'apps', 'kb-cli', 'dist', 'main.js');

type Answer = Record<string, unknown> & { error?: { code: string; message: string } };

interface Delivery {
  id: string;
  messageId: string;
  eventType: string;
  status: string;
  attemptCount: number;
  attempts: Array<{
    attempt: number;
    succeeded: boolean;
    statusCode: number | null;
    error: string | null;
    durationMs: number;
  }>;
}

/**
 * Webhooks through the public API and the CLI: a receiver on loopback (the services run with
 * WEBHOOK_ALLOW_PRIVATE_URLS, as `npm start` does) gets signed deliveries of real pipeline
 * events, retried until it answers, with every try in the delivery log.
 */
describe('webhooks', () => {
  const suite = useSuite('webhooks', 6700, {
    // Short waits so three tries take about a second; four failures in a row disable at once.
    WEBHOOK_RETRY_BASE_MS: '400',
    WEBHOOK_RETRY_MAX_MS: '2000',
    WEBHOOK_MAX_ATTEMPTS: '3',
    WEBHOOK_DISABLE_AFTER_FAILURES: '4',
    WEBHOOK_DISABLE_AFTER_MS: '0',
    WEBHOOK_DISPATCH_INTERVAL_MS: '200',
  });
  const receiver = new WebhookReceiver();
  const secret = `whsec_${randomBytes(32).toString('base64')}`;
  const admin = () => suite.auth({ user: 'root', roles: ['admin'] });

  const api = async (method: string, path: string, body?: unknown, headers?: object) => {
    const response = await fetch(`${suite.webhookUrl}${path}`, {
      method,
      headers: {
        ...(headers ?? (await admin())),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, body: (await response.json()) as Answer };
  };

  const subscribe = async (url: string, events: WebhookEventType[], extra: object = {}) => {
    const created = await api('POST', '/v1/webhooks', { url, events, ...extra });
    expect(created.status).toBe(201);
    return created.body as { id: string; secret: string; enabled: boolean };
  };

  const deliveriesOf = async (id: string): Promise<Delivery[]> =>
    (await api('GET', `/v1/webhooks/${id}/deliveries?limit=100`)).body['items'] as Delivery[];

  const cli = async (...args: string[]): Promise<unknown> => {
    const { stdout } = await run(process.execPath, [CLI, 'webhooks', '--json', ...args], {
      env: {
        ...process.env,
        KB_TOKEN: (await admin()).authorization.slice('Bearer '.length),
        KB_WEBHOOKS_URL: suite.webhookUrl,
      },
    });
    return JSON.parse(stdout);
  };

  /** The request's signature, checked by the reference library and by hand. */
  const verified = (request: ReceivedRequest, key: string) => {
    const { 'webhook-id': id, 'webhook-timestamp': timestamp } = request.headers;
    const expected = createHmac('sha256', Buffer.from(key.slice('whsec_'.length), 'base64'))
      .update(`${id}.${timestamp}.${request.body}`)
      .digest('base64');
    expect(request.headers['webhook-signature']).toBe(`v1,${expected}`);
    return new Webhook(key).verify(request.body, request.headers) as {
      type: WebhookEventType;
      timestamp: string;
      data: Record<string, unknown>;
    };
  };

  const payloadsAt = (path: string, key: string) =>
    receiver
      .at(path)
      .filter((r) => r.answered === 200)
      .map((r) => verified(r, key));

  beforeAll(async () => {
    await receiver.start();
  });

  afterAll(async () => {
    await receiver.stop();
  });

  it('lets tenant admins alone manage webhooks', async () => {
    const editor = await suite.auth();
    const url = receiver.script('/nobody', []);
    for (const [method, path, body] of [
      ['POST', '/v1/webhooks', { url, events: ['document.indexed'] }],
      ['GET', '/v1/webhooks', undefined],
    ] as const) {
      const denied = await api(method, path, body, editor);
      expect(denied.status).toBe(403);
      expect(denied.body.error?.code).toBe('permission_denied');
      const anonymous = await api(method, path, body, {});
      expect(anonymous.status).toBe(401);
    }
  });

  it('refuses bad receivers, events and secrets with stable codes', async () => {
    const bad = async (body: object, code: string) => {
      const answer = await api('POST', '/v1/webhooks', body);
      expect({ status: answer.status, code: answer.body.error?.code }).toEqual({
        status: 400,
        code,
      });
    };
    await bad({ url: 'ftp://127.0.0.1/x', events: ['document.indexed'] }, 'invalid_webhook_url');
    await bad({ url: `${receiver.url}/x`, events: ['document.created'] }, 'invalid_argument');
    await bad({ url: `${receiver.url}/x`, events: [] }, 'invalid_argument');
    await bad(
      { url: `${receiver.url}/x`, events: ['document.indexed'], secret: 'hunter2' },
      'invalid_webhook_secret',
    );
    expect((await api('GET', `/v1/webhooks/${randomUUID()}`)).status).toBe(404);
    expect((await api('GET', `/v1/webhooks/${randomUUID()}/deliveries`)).status).toBe(404);
  });

  it('delivers document.indexed signed to a receiver that fails twice, with all three tries logged', async () => {
    const flaky = await subscribe(receiver.script('/flaky', [500, 503]), ['document.indexed'], {
      secret,
    });
    expect(flaky.secret).toBe(secret);
    const uploaded = await suite.upload('missions.md', MISSIONS_DOCUMENT, 'text/markdown');
    expect(uploaded.status).toBe(202);
    const { id: documentId } = (await uploaded.json()) as { id: string };

    await waitFor(
      async () => receiver.at('/flaky').map((r) => r.answered),
      (answers) => answers.includes(200),
      180_000,
    );
    const tries = receiver.at('/flaky');
    expect(tries.map((r) => r.answered)).toEqual([500, 503, 200]);
    // One message: the same id on every try, each try signed afresh.
    expect(new Set(tries.map((r) => r.headers['webhook-id'])).size).toBe(1);
    const payload = verified(tries[2]!, secret);
    expect(payload.type).toBe('document.indexed');
    expect(payload.data).toEqual({
      documentId,
      version: 1,
      chunkCount: expect.any(Number),
    });
    expect(webhookEventDataSchemas['document.indexed'].parse(payload.data)).toEqual(payload.data);
    // A signature made with another secret does not verify.
    expect(() =>
      new Webhook(`whsec_${randomBytes(32).toString('base64')}`).verify(
        tries[2]!.body,
        tries[2]!.headers,
      ),
    ).toThrow();

    const [delivery] = await deliveriesOf(flaky.id);
    expect(delivery).toMatchObject({
      eventType: 'document.indexed',
      status: 'succeeded',
      attemptCount: 3,
      messageId: tries[0]!.headers['webhook-id'],
    });
    expect(delivery!.attempts.map((a) => [a.attempt, a.statusCode, a.succeeded, a.error])).toEqual([
      [1, 500, false, 'receiver answered HTTP 500'],
      [2, 503, false, 'receiver answered HTTP 503'],
      [3, 200, true, null],
    ]);
    for (const attempt of delivery!.attempts) expect(attempt.durationMs).toBeGreaterThanOrEqual(0);
    // The CLI reads the same log.
    expect(await cli('deliveries', flaky.id)).toEqual({ items: [delivery] });
    const webhook = await api('GET', `/v1/webhooks/${flaky.id}`);
    expect(webhook.body).toMatchObject({ enabled: true, consecutiveFailures: 0 });
    expect(webhook.body['secret']).toBeUndefined();
  });

  it('delivers updates, deletes and collection events to the subscriptions that asked', async () => {
    const all = await subscribe(receiver.script('/all', []), [
      'document.updated',
      'document.deleted',
      'knowledge_base.emptied',
      'source.synced',
    ]);
    const uploaded = await suite.upload(
      'notes.md',
      '# Notes\n\nAerobraking notes.',
      'text/markdown',
    );
    const { id: documentId } = (await uploaded.json()) as { id: string };
    const edited = await fetch(`${suite.documentUrl}/v1/documents/${documentId}`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json', ...(await suite.auth()) },
      body: JSON.stringify({ tags: ['webhooks'] }),
    });
    expect(edited.status).toBe(200);
    const form = new FormData();
    form.append('file', new Blob(['# Notes\n\nSecond version.']), 'notes.md');
    const replaced = await fetch(`${suite.documentUrl}/v1/documents/${documentId}/content`, {
      method: 'PUT',
      body: form,
      headers: await suite.auth(),
    });
    expect(replaced.status).toBe(202);
    const deleted = await fetch(`${suite.documentUrl}/v1/documents/${documentId}`, {
      method: 'DELETE',
      headers: await suite.auth(),
    });
    expect(deleted.status).toBe(200);

    // No REST endpoint on this branch emits kb.collection.v1 yet: its envelopes are published
    // here with the project's producer, as document-service will publish them.
    const kafka = createKafka({ brokers: suite.env['KAFKA_BROKERS']!.split(','), clientId: 'e2e' });
    const producer = new KafkaEventProducer(kafka);
    await producer.connect();
    const knowledgeBaseId = randomUUID();
    const jobId = randomUUID();
    const synced = {
      sourceId: randomUUID(),
      syncId: randomUUID(),
      knowledgeBaseId,
      counts: { added: 2, updated: 1, unchanged: 5, deleted: 1, failed: 0 },
      startedAt: new Date(Date.now() - 1_000).toISOString(),
      finishedAt: new Date().toISOString(),
    };
    try {
      await producer.publish({
        topic: Topics.collection,
        tenantId: suite.tenant,
        key: knowledgeBaseId,
        payload: { kind: 'knowledge_base_emptied', knowledgeBaseId, deletedCount: 3, jobId },
      });
      await producer.publish({
        topic: Topics.collection,
        tenantId: suite.tenant,
        key: synced.sourceId,
        payload: { kind: 'source_synced', ...synced },
      });
    } finally {
      await producer.disconnect();
    }

    const key = all.secret;
    const received = await waitFor(
      async () => payloadsAt('/all', key),
      (payloads) => payloads.length >= 5,
      120_000,
    );
    const updates = received.filter((p) => p.type === 'document.updated').map((p) => p.data);
    expect(updates).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ documentId, change: 'attributes', tags: ['webhooks'] }),
        expect.objectContaining({ documentId, change: 'content', version: 2 }),
      ]),
    );
    expect(received.filter((p) => p.type === 'document.deleted').map((p) => p.data)).toEqual([
      { documentId },
    ]);
    expect(received.find((p) => p.type === 'knowledge_base.emptied')?.data).toEqual({
      knowledgeBaseId,
      deletedCount: 3,
      jobId,
    });
    expect(received.find((p) => p.type === 'source.synced')?.data).toEqual(synced);
    // Nothing it did not ask for (document.indexed went to /flaky only).
    expect(received.map((p) => p.type)).not.toContain('document.indexed');
    for (const payload of received) {
      expect(webhookEventDataSchemas[payload.type].parse(payload.data)).toEqual(payload.data);
    }
  });

  it('disables a subscription after repeated failure, and an admin enables it again (CLI)', async () => {
    const down = await subscribe(receiver.fail('/down', 500), ['source.synced']);
    // A test message fails its three tries and is given up; the next one's first failure is the
    // fourth in a row, which disables the subscription.
    expect((await api('POST', `/v1/webhooks/${down.id}/test`)).status).toBe(202);
    await waitFor(
      async () => (await deliveriesOf(down.id)).map((d) => d.status),
      (statuses) => statuses[0] === 'failed',
      60_000,
    );
    expect((await api('POST', `/v1/webhooks/${down.id}/test`)).status).toBe(202);
    const disabled = await waitFor(
      async () => (await api('GET', `/v1/webhooks/${down.id}`)).body,
      (webhook) => webhook['enabled'] === false,
      60_000,
    );
    expect(disabled['disabledReason']).toMatch(/disabled after 4 or more failed tries in a row/);
    expect(disabled['consecutiveFailures']).toBe(4);
    // Nothing more is tried while it is disabled.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(receiver.at('/down')).toHaveLength(4);
    const log = await deliveriesOf(down.id);
    expect(log.map((d) => [d.status, d.attemptCount])).toEqual([
      ['pending', 1],
      ['failed', 3],
    ]);
    expect(log.flatMap((d) => d.attempts).map((a) => a.statusCode)).toEqual([500, 500, 500, 500]);
    expect(log.every((d) => d.eventType === 'webhook.test')).toBe(true);

    const listed = (await cli('list')) as { items: Array<{ id: string; enabled: boolean }> };
    expect(listed.items.find((w) => w.id === down.id)?.enabled).toBe(false);
    const enabled = (await cli('enable', down.id)) as {
      enabled: boolean;
      consecutiveFailures: number;
    };
    expect(enabled).toMatchObject({ enabled: true, consecutiveFailures: 0 });
    // The delivery left pending goes on once it is enabled.
    await waitFor(
      async () => receiver.at('/down').length,
      (n) => n > 4,
      30_000,
    );
    expect(await cli('delete', down.id)).toEqual({ id: down.id });
    expect((await api('GET', `/v1/webhooks/${down.id}`)).status).toBe(404);
  });

  it('rotates the signing secret with a grace period in which both secrets sign (CLI)', async () => {
    const rotating = await subscribe(receiver.script('/rotating', []), ['source.synced']);
    const rotated = (await cli('rotate-secret', rotating.id, '--grace-seconds', '600')) as {
      secret: string;
      previousSecretExpiresAt: string | null;
    };
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(rotating.secret);
    expect(Date.parse(rotated.previousSecretExpiresAt!) - Date.now()).toBeGreaterThan(500_000);

    const testMessage = async (count: number) => {
      expect((await api('POST', `/v1/webhooks/${rotating.id}/test`)).status).toBe(202);
      return (
        await waitFor(
          async () => receiver.at('/rotating'),
          (requests) => requests.length === count,
          30_000,
        )
      )[count - 1]!;
    };
    // During the grace period: two signatures, each secret verifies.
    const during = await testMessage(1);
    expect(during.headers['webhook-signature']!.split(' ')).toHaveLength(2);
    for (const key of [rotating.secret, rotated.secret]) {
      expect(new Webhook(key).verify(during.body, during.headers)).toMatchObject({
        type: 'webhook.test',
      });
    }

    // Grace 0: only the newest secret signs from now on.
    const immediate = (await cli('rotate-secret', rotating.id, '--grace-seconds', '0')) as {
      secret: string;
      previousSecretExpiresAt: string | null;
    };
    expect(immediate.previousSecretExpiresAt).toBeNull();
    const after = await testMessage(2);
    expect(verified(after, immediate.secret).type).toBe('webhook.test');
    expect(() => new Webhook(rotated.secret).verify(after.body, after.headers)).toThrow();
    expect((await api('GET', `/v1/webhooks/${rotating.id}`)).body['secretRotatedAt']).toEqual(
      expect.any(String),
    );
    // A bad secret is refused with its code.
    const refused = await api('POST', `/v1/webhooks/${rotating.id}/rotate-secret`, {
      secret: 'whsec_short',
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error?.code).toBe('invalid_webhook_secret');
  });

  it('delivers source.synced for a kb sync run of a folder source (ADR 43)', async () => {
    const hook = await subscribe(receiver.script('/folder', []), ['source.synced']);
    const created = await fetch(`${suite.documentUrl}/v1/sources`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(await suite.auth()) },
      body: JSON.stringify({ name: 'Folder', kind: 'folder', knowledgeBaseId: 'default' }),
    });
    expect(created.status).toBe(201);
    const source = (await created.json()) as { id: string };
    const dir = mkdtempSync(join(tmpdir(), 'kb-webhook-sync-'));
    writeFileSync(join(dir, 'tide.md'), '# Tide\n\nThe spring tide floods the causeway.');
    try {
      const { stdout } = await run(
        process.execPath,
        [CLI, 'sync', dir, '--source', source.id, '--json'],
        { env: { ...process.env, KB_TOKEN: suite.token, KB_DOCUMENTS_URL: suite.documentUrl } },
      );
      expect((JSON.parse(stdout) as { counts: object }).counts).toMatchObject({ added: 1 });
      const received = await waitFor(
        async () => payloadsAt('/folder', hook.secret),
        (payloads) => payloads.some((p) => p.type === 'source.synced'),
        120_000,
      );
      expect(received.find((p) => p.type === 'source.synced')?.data).toMatchObject({
        sourceId: source.id,
        syncId: expect.any(String),
        knowledgeBaseId: 'default',
        counts: { added: 1, updated: 0, unchanged: 0, deleted: 0, failed: 0 },
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
