import { randomUUID } from 'node:crypto';

import { Inject, Injectable } from '@nestjs/common';
import { type Kysely, sql } from 'kysely';

import type { DB } from '../platform/db.generated';
import { SECRET_BOX, WEBHOOK_DB } from '../platform/tokens';
import type { SecretBox } from '../webhooks/secret-box';
import type { DeliveriesQuery, DeliveryStatus, DeliveryView } from '../webhooks/webhook.model';

/** A delivery the dispatcher has claimed, with what it needs to send it. */
export interface ClaimedDelivery {
  id: string;
  tenantId: string;
  webhookId: string;
  messageId: string;
  eventType: string;
  body: string;
  attemptCount: number;
  url: string;
  /** The secrets that sign it: the current one, and the one before it while its grace lasts. */
  secrets: string[];
  /** Why its secrets could not be opened (no configured key opens them); then `secrets` is empty. */
  secretError?: string;
}

/** An event some subscriptions may be owed: its Standard Webhooks id, type and body. */
export interface OwedEvent {
  tenantId: string;
  messageId: string;
  eventType: string;
  occurredAt: Date;
  body: string;
}

/** The outcome of one try. */
export interface AttemptOutcome {
  succeeded: boolean;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  at: Date;
}

/** What recording a try changed. */
export interface RecordedAttempt {
  status: DeliveryStatus;
  /** True when this try's failure disabled the subscription. */
  disabledNow: boolean;
}

const iso = (value: Date | null): string | null => (value ? new Date(value).toISOString() : null);

/** The retry queue (one row per subscription and event) and the log of every try. */
@Injectable()
export class DeliveriesRepository {
  constructor(
    @Inject(WEBHOOK_DB) private readonly db: Kysely<DB>,
    @Inject(SECRET_BOX) private readonly box: SecretBox,
  ) {}

  /**
   * Owes each event's `body` to every enabled subscription of its tenant that asked for its type
   * and existed when it happened: one statement for a consumed batch. A message already owed to a
   * subscription is not owed twice (Kafka redelivers; statuses repeat). Returns the number of
   * deliveries created.
   */
  async enqueue(events: OwedEvent[], now: Date): Promise<number> {
    if (events.length === 0) return 0;
    const rows = events.map((e) => ({
      tenant_id: e.tenantId,
      message_id: e.messageId,
      event_type: e.eventType,
      occurred_at: e.occurredAt.toISOString(),
      body: e.body,
    }));
    const result = await sql`
      INSERT INTO deliveries (id, tenant_id, webhook_id, message_id, event_type, body, status,
                              attempt_count, next_attempt_at, created_at, updated_at)
      SELECT gen_random_uuid(), e.tenant_id, w.id, e.message_id, e.event_type, e.body, 'pending',
             0, ${now}, ${now}, ${now}
        FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
               AS e(tenant_id text, message_id text, event_type text, occurred_at timestamptz,
                    body text)
        JOIN webhooks w
          ON w.tenant_id = e.tenant_id AND w.enabled AND e.event_type = ANY (w.events)
         AND w.created_at <= e.occurred_at
      ON CONFLICT (webhook_id, message_id) DO NOTHING`.execute(this.db);
    return Number(result.numAffectedRows ?? 0);
  }

  /** Owes a message to one subscription whatever it asked for (the test event). */
  async enqueueTo(
    tenantId: string,
    webhookId: string,
    event: { messageId: string; eventType: string; body: string },
    now: Date,
  ): Promise<string> {
    const id = randomUUID();
    await sql`
      INSERT INTO deliveries (id, tenant_id, webhook_id, message_id, event_type, body, status,
                              attempt_count, next_attempt_at, created_at, updated_at)
      VALUES (${id}, ${tenantId}, ${webhookId}, ${event.messageId}, ${event.eventType},
              ${event.body}, 'pending', 0, ${now}, ${now}, ${now})`.execute(this.db);
    return id;
  }

  /**
   * Claims up to `limit` due deliveries of enabled subscriptions for `leaseMs`: another replica
   * skips them, and if this one dies mid-send they are due again when the lease ends (so a
   * receiver may see a message twice, never none).
   *
   * Fair across tenants (review N7): a tenant gets no more than `perTenant` deliveries in flight
   * at once, counting the leases every replica holds, and the claim takes each tenant's oldest due
   * delivery before anyone's second (round-robin by turn, then by due time). A lease counts while
   * it lasts (one ending later than a lease taken now would is ignored: the clock went back, or a
   * replica's clock is ahead). A tenant whose
   * receivers are slow or failing fills its own share, never everyone's. Tenants with pending
   * deliveries are found by a skip scan of `deliveries_due_by_tenant`, one index probe each.
   */
  async claimDue(
    now: Date,
    limit: number,
    leaseMs: number,
    perTenant: number = limit,
  ): Promise<ClaimedDelivery[]> {
    const leaseUntil = new Date(now.getTime() + leaseMs);
    const { rows } = await sql<{
      id: string;
      tenant_id: string;
      webhook_id: string;
      message_id: string;
      event_type: string;
      body: string;
      attempt_count: number;
      url: string;
      secret: string;
      previous_secret: string | null;
    }>`
      WITH RECURSIVE tenants (tenant_id) AS (
        (SELECT tenant_id FROM deliveries WHERE status = 'pending' ORDER BY tenant_id LIMIT 1)
        UNION ALL
        SELECT (SELECT d.tenant_id FROM deliveries d
                 WHERE d.status = 'pending' AND d.tenant_id > t.tenant_id
                 ORDER BY d.tenant_id LIMIT 1)
          FROM tenants t WHERE t.tenant_id IS NOT NULL),
      busy AS (
        SELECT tenant_id, count(*)::int AS in_flight FROM deliveries
         WHERE leased_until IS NOT NULL AND leased_until > ${now} AND leased_until <= ${leaseUntil}
           AND status = 'pending'
         GROUP BY tenant_id),
      offered AS (
        SELECT c.id, c.next_attempt_at,
               row_number() OVER (PARTITION BY t.tenant_id ORDER BY c.next_attempt_at) AS turn
          FROM tenants t
          LEFT JOIN busy b ON b.tenant_id = t.tenant_id
         CROSS JOIN LATERAL (
           SELECT d.id, d.next_attempt_at FROM deliveries d JOIN webhooks w ON w.id = d.webhook_id
            WHERE d.tenant_id = t.tenant_id AND d.status = 'pending'
              AND d.next_attempt_at <= ${now} AND w.enabled
            ORDER BY d.next_attempt_at
            LIMIT GREATEST(0, LEAST(${perTenant}::int - COALESCE(b.in_flight, 0), ${limit}::int))
            FOR UPDATE OF d SKIP LOCKED) c
         WHERE t.tenant_id IS NOT NULL),
      due AS (
        SELECT id, turn, next_attempt_at AS due_at FROM offered
         ORDER BY turn, next_attempt_at LIMIT ${limit}),
      claimed AS (
        UPDATE deliveries d SET next_attempt_at = ${leaseUntil}, leased_until = ${leaseUntil}
          FROM due, webhooks w
         WHERE d.id = due.id AND w.id = d.webhook_id
        RETURNING d.id, d.tenant_id, d.webhook_id, d.message_id, d.event_type, d.body,
                  d.attempt_count, w.url, w.secret,
                  CASE WHEN w.previous_secret_expires_at > ${now} THEN w.previous_secret END
                    AS previous_secret, due.turn, due.due_at)
      SELECT * FROM claimed ORDER BY turn, due_at`.execute(this.db);
    return rows.map((row) => {
      const claimed = {
        id: row.id,
        tenantId: row.tenant_id,
        webhookId: row.webhook_id,
        messageId: row.message_id,
        eventType: row.event_type,
        body: row.body,
        attemptCount: row.attempt_count,
        url: row.url,
      };
      try {
        const stored = row.previous_secret ? [row.secret, row.previous_secret] : [row.secret];
        return { ...claimed, secrets: stored.map((s) => this.box.open(s, row.webhook_id)) };
      } catch (error) {
        return { ...claimed, secrets: [], secretError: (error as Error).message };
      }
    });
  }

  /**
   * Logs one try and moves its delivery on: succeeded, pending until `nextAttemptAt`, or failed
   * when no further try is due. The subscription's failures in a row (and when the streak began)
   * reset on success and grow on failure; `disable.failures` of them lasting `disable.afterMs`
   * disable it, in the same transaction.
   */
  async recordAttempt(
    delivery: Pick<ClaimedDelivery, 'id' | 'webhookId' | 'attemptCount'>,
    outcome: AttemptOutcome,
    nextAttemptAt: Date | undefined,
    disable: { failures: number; afterMs: number },
  ): Promise<RecordedAttempt> {
    const attempt = delivery.attemptCount + 1;
    const status: DeliveryStatus = outcome.succeeded
      ? 'succeeded'
      : nextAttemptAt
        ? 'pending'
        : 'failed';
    const failingSinceLimit = new Date(outcome.at.getTime() - disable.afterMs);
    return this.db.transaction().execute(async (tx) => {
      await sql`
        INSERT INTO delivery_attempts (delivery_id, attempt, at, succeeded, status_code, error,
                                       duration_ms)
        VALUES (${delivery.id}, ${attempt}, ${outcome.at}, ${outcome.succeeded},
                ${outcome.statusCode}, ${outcome.error}, ${outcome.durationMs})
        ON CONFLICT (delivery_id, attempt) DO NOTHING`.execute(tx);
      await sql`
        UPDATE deliveries SET status = ${status}, attempt_count = ${attempt},
               next_attempt_at = ${status === 'pending' ? nextAttemptAt! : null},
               leased_until = NULL,
               last_status_code = ${outcome.statusCode}, last_error = ${outcome.error},
               updated_at = ${outcome.at}
         WHERE id = ${delivery.id}`.execute(tx);
      const reason = `disabled after ${disable.failures} or more failed tries in a row; last: ${
        outcome.error ?? `HTTP ${outcome.statusCode}`
      }`;
      // Whether this failure completes the streak that disables: enough failures, long enough.
      const disables = sql`(w.enabled AND NOT ${outcome.succeeded}
        AND w.consecutive_failures + 1 >= ${disable.failures}
        AND COALESCE(w.failing_since, ${outcome.at}) <= ${failingSinceLimit})`;
      const { rows } = await sql<{ disabled_now: boolean }>`
        UPDATE webhooks w SET
          consecutive_failures = CASE WHEN ${outcome.succeeded} THEN 0
                                      ELSE w.consecutive_failures + 1 END,
          failing_since = CASE WHEN ${outcome.succeeded} THEN NULL
                               ELSE COALESCE(w.failing_since, ${outcome.at}) END,
          enabled = w.enabled AND NOT ${disables},
          disabled_at = CASE WHEN ${disables} THEN ${outcome.at} ELSE w.disabled_at END,
          disabled_reason = CASE WHEN ${disables} THEN ${reason} ELSE w.disabled_reason END,
          updated_at = ${outcome.at}
         FROM webhooks before
        WHERE w.id = ${delivery.webhookId} AND before.id = w.id
        RETURNING before.enabled AND NOT w.enabled AS disabled_now`.execute(tx);
      return { status, disabledNow: rows[0]?.disabled_now === true };
    });
  }

  /** A subscription's deliveries, newest first, each with its tries oldest first. */
  async list(tenantId: string, webhookId: string, query: DeliveriesQuery): Promise<DeliveryView[]> {
    const { rows } = await sql<{
      id: string;
      message_id: string;
      event_type: string;
      status: DeliveryStatus;
      attempt_count: number;
      next_attempt_at: Date | null;
      created_at: Date;
      updated_at: Date;
      attempts: Array<{
        attempt: number;
        at: string;
        succeeded: boolean;
        status_code: number | null;
        error: string | null;
        duration_ms: number;
      }>;
    }>`
      SELECT d.id, d.message_id, d.event_type, d.status, d.attempt_count, d.next_attempt_at,
             d.created_at, d.updated_at,
             COALESCE((SELECT json_agg(json_build_object(
                         'attempt', a.attempt, 'at', a.at, 'succeeded', a.succeeded,
                         'status_code', a.status_code, 'error', a.error,
                         'duration_ms', a.duration_ms) ORDER BY a.attempt)
                         FROM delivery_attempts a WHERE a.delivery_id = d.id), '[]') AS attempts
        FROM deliveries d
       WHERE d.tenant_id = ${tenantId} AND d.webhook_id = ${webhookId}
         AND (${query.status ?? null}::text IS NULL OR d.status = ${query.status ?? null})
       ORDER BY d.created_at DESC, d.id DESC
       LIMIT ${query.limit}`.execute(this.db);
    return rows.map((row) => ({
      id: row.id,
      messageId: row.message_id,
      eventType: row.event_type,
      status: row.status,
      attemptCount: row.attempt_count,
      nextAttemptAt: row.status === 'pending' ? iso(row.next_attempt_at) : null,
      createdAt: iso(row.created_at)!,
      updatedAt: iso(row.updated_at)!,
      attempts: row.attempts.map((a) => ({
        attempt: a.attempt,
        at: new Date(a.at).toISOString(),
        succeeded: a.succeeded,
        statusCode: a.status_code,
        error: a.error,
        durationMs: a.duration_ms,
      })),
    }));
  }

  /**
   * Deletes up to `limit` finished (succeeded or failed) deliveries last touched before `before`,
   * oldest first, with their tries; returns how many. Pending ones are never pruned.
   */
  async pruneFinished(before: Date, limit: number): Promise<number> {
    const result = await sql`
      DELETE FROM deliveries WHERE id IN (
        SELECT id FROM deliveries
         WHERE status <> 'pending' AND updated_at < ${before}
         ORDER BY updated_at
         LIMIT ${limit})`.execute(this.db);
    return Number(result.numAffectedRows ?? 0);
  }
}
