import { WEBHOOK_EVENT_TYPES } from '@kb/contracts';
import { type Command, InvalidArgumentError } from 'commander';

import { type Delivery, type Webhook, WebhooksClient } from './webhooks.client';

interface CommonOptions {
  token?: string;
  webhooksUrl: string;
  json?: boolean;
}

export function parseEvents(value: string): string[] {
  const events = value
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  const unknown = events.filter((e) => !(WEBHOOK_EVENT_TYPES as readonly string[]).includes(e));
  if (unknown.length || events.length === 0) {
    throw new InvalidArgumentError(
      `unknown event ${unknown.join(', ')}; use a comma list of ${WEBHOOK_EVENT_TYPES.join('|')}`,
    );
  }
  return events;
}

/** One row per webhook, for a terminal. */
export const webhookRows = (webhooks: Webhook[]) =>
  webhooks.map((w) => ({
    id: w.id,
    url: w.url,
    events: w.events.join(','),
    enabled: w.enabled ? 'yes' : `no (${w.disabledReason ?? 'disabled'})`,
    failuresInARow: w.consecutiveFailures,
  }));

/** One row per try of each delivery, newest delivery first. */
export const deliveryRows = (deliveries: Delivery[]) =>
  deliveries.flatMap((d) =>
    (d.attempts.length ? d.attempts : [undefined]).map((a) => ({
      delivery: d.id.slice(0, 8),
      event: d.eventType,
      status: d.status,
      try: a?.attempt ?? 0,
      at: a?.at ?? d.createdAt,
      http: a?.statusCode ?? '',
      ms: a?.durationMs ?? '',
      error: a?.error ?? '',
      next: d.nextAttemptAt ?? '',
    })),
  );

const print = (json: boolean | undefined, value: unknown, rows: () => object[]): void => {
  if (json) {
    process.stdout.write(`${JSON.stringify(value)}\n`);
    return;
  }
  const table = rows();
  if (table.length === 0) process.stdout.write('(none)\n');
  else console.table(table);
};

/** `kb webhooks create|list|get|enable|disable|delete|rotate-secret|deliveries|test` (tenant admins). */
export function registerWebhooksCommand(program: Command): void {
  const webhooks = program
    .command('webhooks')
    .description(
      "Manage the tenant's webhook subscriptions and read their delivery log (tenant admins).",
    )
    .option(
      '--token <jwt>',
      'bearer token of a tenant admin (default: KB_TOKEN)',
      process.env['KB_TOKEN'],
    )
    .option(
      '--webhooks-url <url>',
      'webhook-service base URL',
      process.env['KB_WEBHOOKS_URL'] ?? 'http://127.0.0.1:3007',
    )
    .option('--json', 'print the API answer as one JSON object');

  const client = (): { api: WebhooksClient; json: boolean | undefined } => {
    const options = webhooks.opts<CommonOptions>();
    if (!options.token) throw new Error('a token is required: --token or KB_TOKEN (see kb token)');
    return { api: new WebhooksClient(options.webhooksUrl, options.token), json: options.json };
  };

  webhooks
    .command('create')
    .description('Subscribe a receiver URL; prints the signing secret, which is shown only once.')
    .requiredOption('--url <url>', 'where deliveries are POSTed (http or https)')
    .requiredOption('--events <list>', `comma list: ${WEBHOOK_EVENT_TYPES.join(', ')}`, parseEvents)
    .option('--secret <whsec>', 'signing secret, whsec_ + base64 (default: generated)')
    .option('--description <text>', 'what the receiver is')
    .action(
      async (options: { url: string; events: string[]; secret?: string; description?: string }) => {
        const { api, json } = client();
        const created = await api.create({
          url: options.url,
          events: options.events,
          ...(options.secret ? { secret: options.secret } : {}),
          ...(options.description ? { description: options.description } : {}),
        });
        print(json, created, () => webhookRows([created]));
        if (!json) process.stdout.write(`secret: ${created.secret}\n`);
      },
    );

  webhooks
    .command('list')
    .description("The tenant's subscriptions.")
    .action(async () => {
      const { api, json } = client();
      const items = await api.list();
      print(json, { items }, () => webhookRows(items));
    });

  webhooks
    .command('get')
    .argument('<id>', 'webhook id')
    .description('One subscription, with whether (and why) it is disabled.')
    .action(async (id: string) => {
      const { api, json } = client();
      const webhook = await api.get(id);
      print(json, webhook, () => webhookRows([webhook]));
    });

  for (const [name, enabled] of [
    ['enable', true],
    ['disable', false],
  ] as const) {
    webhooks
      .command(name)
      .argument('<id>', 'webhook id')
      .description(
        enabled
          ? 'Enable a subscription again (after automatic disabling); its failure count restarts.'
          : 'Stop deliveries to a subscription; what is owed waits until it is enabled.',
      )
      .action(async (id: string) => {
        const { api, json } = client();
        const webhook = await api.update(id, { enabled });
        print(json, webhook, () => webhookRows([webhook]));
      });
  }

  webhooks
    .command('delete')
    .argument('<id>', 'webhook id')
    .description('Remove a subscription with its deliveries and their log.')
    .action(async (id: string) => {
      const { api, json } = client();
      const deleted = await api.delete(id);
      if (json) process.stdout.write(`${JSON.stringify(deleted)}\n`);
      else process.stdout.write(`deleted ${deleted.id}\n`);
    });

  webhooks
    .command('rotate-secret')
    .argument('<id>', 'webhook id')
    .description(
      'Replace the signing secret (printed once); the old one keeps signing beside it for the grace period.',
    )
    .option('--secret <whsec>', 'the new secret, whsec_ + base64 (default: generated)')
    .option(
      '--grace-seconds <n>',
      'how long the old secret also signs (0: stops at once; at most 604800)',
      (v) => Number.parseInt(v, 10),
      86_400,
    )
    .action(async (id: string, options: { secret?: string; graceSeconds: number }) => {
      const { api, json } = client();
      const rotated = await api.rotateSecret(id, {
        graceSeconds: options.graceSeconds,
        ...(options.secret ? { secret: options.secret } : {}),
      });
      if (json) process.stdout.write(`${JSON.stringify(rotated)}\n`);
      else {
        const until = rotated.previousSecretExpiresAt;
        process.stdout.write(
          `secret: ${rotated.secret}\n${until ? `the previous secret also signs until ${until}` : 'the previous secret no longer signs'}\n`,
        );
      }
    });

  webhooks
    .command('deliveries')
    .argument('<id>', 'webhook id')
    .description('The delivery log, newest first: every try with its HTTP status, error and time.')
    .option('--status <status>', 'pending|succeeded|failed')
    .option('--limit <n>', 'deliveries (at most 100)', (v) => Number.parseInt(v, 10), 20)
    .action(async (id: string, options: { status?: string; limit: number }) => {
      const { api, json } = client();
      const items = await api.deliveries(id, options);
      print(json, { items }, () => deliveryRows(items));
    });

  webhooks
    .command('test')
    .argument('<id>', 'webhook id')
    .description('Send a webhook.test message through the queue, signing and retries.')
    .action(async (id: string) => {
      const { api, json } = client();
      const queued = await api.test(id);
      if (json) process.stdout.write(`${JSON.stringify(queued)}\n`);
      else process.stdout.write(`queued delivery ${queued.deliveryId} (${queued.messageId})\n`);
    });
}
