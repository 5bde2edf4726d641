import { meter } from '@kb/observability';
import { PeriodicTask } from '@kb/timing';
import {
  type BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
} from '@nestjs/common';

import { CLOCK, type Clock } from '../platform/tokens';
import { WebhooksRepository } from './webhooks.repository';

const sealedTotal = meter().createCounter('kb_webhook_secrets_sealed_total', {
  description:
    'Stored signing secrets sealed with the current WEBHOOK_SECRET_KEY (plaintext or an older key)',
});

/** How often stored secrets are looked over again (a rolling deploy's old replicas, a new key). */
const SEAL_INTERVAL_MS = 3_600_000;

/**
 * Seals the signing secrets the current key did not seal (review N11): plaintext ones stored
 * before encryption, and ones an older key sealed after WEBHOOK_SECRET_KEY changed. At start,
 * then hourly. The migration Job cannot do it: it never holds the key (docs/adr/0027). Until a
 * row is sealed its plaintext still signs (`SecretBox.open`).
 */
@Injectable()
export class WebhookSecretSealer implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(WebhookSecretSealer.name);
  private readonly task: PeriodicTask;
  private first?: Promise<void>;

  constructor(
    private readonly webhooks: WebhooksRepository,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {
    this.task = new PeriodicTask(
      'sealing secrets',
      SEAL_INTERVAL_MS,
      () => this.seal(),
      this.logger,
    );
  }

  onApplicationBootstrap(): void {
    this.first = this.seal().then(
      () => undefined,
      (error: unknown) => this.logger.error(`sealing secrets failed: ${String(error)}`),
    );
    this.task.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.first;
    await this.task.stop();
  }

  /** One pass over the stored secrets; returns how many subscriptions it sealed. */
  async seal(): Promise<number> {
    const { sealed, unreadable } = await this.webhooks.sealStoredSecrets(this.clock());
    if (sealed > 0) {
      sealedTotal.add(sealed);
      this.logger.log(`sealed the signing secrets of ${sealed} webhooks with the current key`);
    }
    if (unreadable > 0) {
      this.logger.error(
        `${unreadable} webhooks have signing secrets that no configured key opens: put the key that sealed them in WEBHOOK_SECRET_PREVIOUS_KEYS`,
      );
    }
    return sealed;
  }
}
