import { describeMigratedSchema } from '@kb/database/test/support/migrated-schema';

import { migrations } from '../src/migrations';

describeMigratedSchema('webhook-service', {
  migrations,
  types: {
    file: `${__dirname}/../src/platform/db.generated.ts`,
    overrides: {
      'webhooks.events': 'WebhookEventType[]',
      'deliveries.event_type': 'WebhookEventType',
      'deliveries.status': 'DeliveryStatus',
    },
    imports: { WebhookEventType: '@kb/contracts', DeliveryStatus: '../webhooks/webhook.model' },
  },
});
