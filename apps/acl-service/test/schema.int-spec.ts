import { describeMigratedSchema } from '@kb/database/test/support/migrated-schema';

import { migrations } from '../src/migrations';

describeMigratedSchema('acl-service', {
  migrations,
  types: {
    file: `${__dirname}/../src/platform/db.generated.ts`,
    overrides: { 'audit_log.action': "AuditEvent['action']" },
    imports: { AuditEvent: '@kb/contracts' },
  },
});
