import type { WebhookEventType } from '@kb/contracts';
import { Inject, Injectable } from '@nestjs/common';
import { type Kysely, type Selectable, sql } from 'kysely';

import type { DB, Webhooks } from '../platform/db.generated';
import { SECRET_BOX, WEBHOOK_DB } from '../platform/tokens';
import { type SecretBox, SecretUnreadableError } from './secret-box';
import type { WebhookView } from './webhook.model';

export interface NewWebhook {
  id: string;
  url: string;
  events: WebhookEventType[];
  secret: string;
  description: string;
  at: Date;
}

const COLUMNS = [
  'id',
  'url',
  'events',
  'description',
  'enabled',
  'disabled_reason',
  'disabled_at',
  'consecutive_failures',
  'secret_rotated_at',
  'previous_secret_expires_at',
  'created_at',
  'updated_at',
] as const;

type WebhookRow = Pick<Selectable<Webhooks>, (typeof COLUMNS)[number]>;

const iso = (value: Date | null): string | null => (value ? new Date(value).toISOString() : null);

export const toWebhookView = (row: WebhookRow): WebhookView => ({
  id: row.id,
  url: row.url,
  events: row.events,
  description: row.description,
  enabled: row.enabled,
  disabledReason: row.disabled_reason,
  disabledAt: iso(row.disabled_at),
  consecutiveFailures: row.consecutive_failures,
  secretRotatedAt: iso(row.secret_rotated_at),
  previousSecretExpiresAt: iso(row.previous_secret_expires_at),
  createdAt: iso(row.created_at)!,
  updatedAt: iso(row.updated_at)!,
});

/** The columns above, for the statements written in SQL. */
const COLUMN_LIST = sql.join(COLUMNS.map((column) => sql.ref(column)));

/**
 * A tenant's subscriptions; every query is scoped by the tenant. Signing secrets are stored sealed
 * (`SecretBox`) and never read back here: only the dispatcher's claim opens them.
 */
@Injectable()
export class WebhooksRepository {
  constructor(
    @Inject(WEBHOOK_DB) private readonly db: Kysely<DB>,
    @Inject(SECRET_BOX) private readonly box: SecretBox,
  ) {}

  /**
   * Stores a new subscription unless the tenant has `maxPerTenant` already (undefined then). The
   * count and the insert run under a per-tenant advisory lock, so concurrent creates cannot pass
   * the limit together.
   */
  async insert(
    tenantId: string,
    webhook: NewWebhook,
    maxPerTenant: number,
  ): Promise<WebhookView | undefined> {
    return this.db.transaction().execute(async (tx) => {
      await sql`SELECT pg_advisory_xact_lock(hashtext(${`webhooks:${tenantId}`}))`.execute(tx);
      const { n } = await tx
        .selectFrom('webhooks')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('tenant_id', '=', tenantId)
        .executeTakeFirstOrThrow();
      if (Number(n) >= maxPerTenant) return undefined;
      const row = await tx
        .insertInto('webhooks')
        .values({
          id: webhook.id,
          tenant_id: tenantId,
          url: webhook.url,
          events: webhook.events,
          secret: this.box.seal(webhook.secret, webhook.id),
          description: webhook.description,
          created_at: webhook.at,
          updated_at: webhook.at,
        })
        .returning(COLUMNS)
        .executeTakeFirstOrThrow();
      return toWebhookView(row);
    });
  }

  async list(tenantId: string): Promise<WebhookView[]> {
    const rows = await this.db
      .selectFrom('webhooks')
      .select(COLUMNS)
      .where('tenant_id', '=', tenantId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map(toWebhookView);
  }

  async get(tenantId: string, id: string): Promise<WebhookView | undefined> {
    const row = await this.db
      .selectFrom('webhooks')
      .select(COLUMNS)
      .where('tenant_id', '=', tenantId)
      .where('id', '=', id)
      .executeTakeFirst();
    return row ? toWebhookView(row) : undefined;
  }

  /**
   * Applies the given changes; enabling clears the disabled state and the failure count.
   * Undefined when the tenant has no such webhook.
   */
  async update(
    tenantId: string,
    id: string,
    change: { enabled?: boolean; events?: WebhookEventType[]; description?: string },
    at: Date,
  ): Promise<WebhookView | undefined> {
    const enabled = change.enabled ?? null;
    const { rows } = await sql<WebhookRow>`
      UPDATE webhooks SET
        enabled = COALESCE(${enabled}::boolean, enabled),
        disabled_reason = CASE WHEN ${enabled}::boolean IS TRUE THEN NULL
                               WHEN ${enabled}::boolean IS FALSE AND enabled THEN 'disabled by an admin'
                               ELSE disabled_reason END,
        disabled_at = CASE WHEN ${enabled}::boolean IS TRUE THEN NULL
                           WHEN ${enabled}::boolean IS FALSE AND enabled THEN ${at}
                           ELSE disabled_at END,
        consecutive_failures = CASE WHEN ${enabled}::boolean IS TRUE THEN 0
                                    ELSE consecutive_failures END,
        failing_since = CASE WHEN ${enabled}::boolean IS TRUE THEN NULL ELSE failing_since END,
        events = COALESCE(${change.events ?? null}::text[], events),
        description = COALESCE(${change.description ?? null}::text, description),
        updated_at = ${at}
       WHERE tenant_id = ${tenantId} AND id = ${id}
      RETURNING ${COLUMN_LIST}`.execute(this.db);
    return rows[0] ? toWebhookView(rows[0]) : undefined;
  }

  /**
   * Replaces the signing secret; the one it replaces keeps signing until `previousUntil`
   * (none when null). A rotation during another's grace drops the oldest secret: two at most.
   */
  async rotateSecret(
    tenantId: string,
    id: string,
    secret: string,
    previousUntil: Date | null,
    at: Date,
  ): Promise<WebhookView | undefined> {
    const { rows } = await sql<WebhookRow>`
      UPDATE webhooks SET
        previous_secret = CASE WHEN ${previousUntil}::timestamptz IS NULL THEN NULL ELSE secret END,
        previous_secret_expires_at = ${previousUntil}::timestamptz,
        secret = ${this.box.seal(secret, id)},
        secret_rotated_at = ${at},
        updated_at = ${at}
       WHERE tenant_id = ${tenantId} AND id = ${id}
      RETURNING ${COLUMN_LIST}`.execute(this.db);
    return rows[0] ? toWebhookView(rows[0]) : undefined;
  }

  /**
   * Seals every stored secret the current key did not seal: plaintext ones from before encryption
   * and ones an older key sealed (key rotation), in short transactions of `batch` rows locked
   * against a concurrent rotation. Previous secrets whose grace has ended are dropped rather than
   * sealed. Rows that no configured key opens are left as they are and counted as unreadable.
   */
  async sealStoredSecrets(at: Date, batch = 100): Promise<{ sealed: number; unreadable: number }> {
    await this.db
      .updateTable('webhooks')
      .set({ previous_secret: null })
      .where('previous_secret', 'is not', null)
      .where('previous_secret_expires_at', '<=', at)
      .execute();
    const pattern = this.box.currentPattern;
    const unreadable: string[] = [];
    let sealed = 0;
    for (;;) {
      const seen = await this.db.transaction().execute(async (tx) => {
        const { rows } = await sql<{ id: string; secret: string; previous_secret: string | null }>`
          SELECT id, secret, previous_secret FROM webhooks
           WHERE (secret NOT LIKE ${pattern} OR previous_secret NOT LIKE ${pattern})
             AND NOT (id = ANY (${unreadable}::uuid[]))
           ORDER BY id LIMIT ${batch}
           FOR UPDATE SKIP LOCKED`.execute(tx);
        for (const row of rows) {
          try {
            const reseal = (stored: string) => this.box.seal(this.box.open(stored, row.id), row.id);
            const secret = reseal(row.secret);
            const previous = row.previous_secret === null ? null : reseal(row.previous_secret);
            await tx
              .updateTable('webhooks')
              .set({ secret, previous_secret: previous })
              .where('id', '=', row.id)
              .execute();
            sealed++;
          } catch (error) {
            if (!(error instanceof SecretUnreadableError)) throw error;
            unreadable.push(row.id);
          }
        }
        return rows.length;
      });
      if (seen === 0) return { sealed, unreadable: unreadable.length };
    }
  }

  /** Removes the subscription with its deliveries and their log; false when there was none. */
  async delete(tenantId: string, id: string): Promise<boolean> {
    const result = await this.db
      .deleteFrom('webhooks')
      .where('tenant_id', '=', tenantId)
      .where('id', '=', id)
      .executeTakeFirst();
    return result.numDeletedRows > 0n;
  }
}
