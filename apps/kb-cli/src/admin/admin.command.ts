import { s3BlobStoreFromEnv } from '@kb/storage';
import type { Command } from 'commander';

import { localToken } from '../token/local-secret';
import { backup } from './backup';
import { readManifest } from './backup.manifest';
import { restore } from './restore';

interface StoreFlags {
  databaseUrl?: string;
  vectorDatabaseUrl?: string;
  bucket?: string;
  json?: boolean;
}

const env = process.env;

/** The connections every admin command takes: flags, else the services' own variables. */
function withStoreOptions(command: Command): Command {
  return command
    .option(
      '--database-url <url>',
      'metadata database (default: DATABASE_URL)',
      env['DATABASE_URL'],
    )
    .option(
      '--vector-database-url <url>',
      'pgvector database (default: VECTOR_DATABASE_URL; none with VECTOR_STORE=pinecone)',
      env['VECTOR_STORE'] === 'pinecone' ? undefined : env['VECTOR_DATABASE_URL'],
    )
    .option(
      '--bucket <name>',
      'bucket of the originals (default: S3_BUCKET; S3_* settings)',
      env['S3_BUCKET'],
    )
    .option('--json', 'print the result as one JSON object');
}

function storesOf(flags: StoreFlags) {
  if (!flags.databaseUrl)
    throw new Error('a metadata database is required: --database-url or DATABASE_URL');
  if (!flags.bucket) throw new Error('a bucket is required: --bucket or S3_BUCKET');
  return {
    metadataUrl: flags.databaseUrl,
    vectorsUrl: flags.vectorDatabaseUrl,
    store: s3BlobStoreFromEnv({
      S3_ENDPOINT: env['S3_ENDPOINT'],
      S3_REGION: env['S3_REGION'] ?? 'us-east-1',
      S3_BUCKET: flags.bucket,
      S3_ACCESS_KEY_ID: env['S3_ACCESS_KEY_ID'],
      S3_SECRET_ACCESS_KEY: env['S3_SECRET_ACCESS_KEY'],
    }),
  };
}

const seconds = (ms: Record<string, number>) =>
  Object.entries(ms)
    .map(([phase, took]) => `${phase} ${(took / 1000).toFixed(1)} s`)
    .join(', ');

const print = (flags: { json?: boolean }, value: unknown, text: string) =>
  process.stdout.write(flags.json ? `${JSON.stringify(value)}\n` : text);

async function repairTenant(documentsUrl: string, token: string) {
  const response = await fetch(`${documentsUrl}/v1/admin/repair`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
  });
  const body = (await response.json().catch(() => ({}))) as {
    redriven?: number;
    error?: { message?: string };
  };
  if (!response.ok)
    throw new Error(`repair answered ${response.status}: ${body.error?.message ?? ''}`);
  return body.redriven ?? 0;
}

/** `kb admin backup|restore|repair` (docs/adr/0040, docs/operators.md "Back up and restore"). */
export function registerAdminCommand(program: Command): void {
  const admin = program
    .command('admin')
    .description(
      'Operator commands: back up, restore, repair after a restore (docs/operators.md).',
    );

  withStoreOptions(
    admin
      .command('backup <dir>')
      .description(
        'Dump both databases (pg_dump, custom format; pg_dump from PG_BIN or PATH) and copy the S3 originals into <dir>, with a manifest',
      ),
  ).action(async (dir: string, flags: StoreFlags) => {
    const stores = storesOf(flags);
    try {
      const manifest = await backup(dir, stores);
      print(
        flags,
        manifest,
        `backed up ${manifest.databases.map((d) => d.database).join(' and ')}, ${manifest.objects.count} originals (${manifest.objects.bytes} bytes), ${manifest.tenants.length} tenants into ${dir} (${seconds(manifest.tookMs)})\nleft out:\n${manifest.leftOut.map((what) => `  - ${what}\n`).join('')}`,
      );
    } finally {
      stores.store.destroy();
    }
  });

  withStoreOptions(
    admin
      .command('restore <dir>')
      .description(
        'Restore a backup into empty databases (or --replace) and the bucket, with the services stopped; refuses a backup from a newer schema. Then start the services and run kb admin repair',
      )
      .option(
        '--replace',
        "restore over databases that hold tables: drop the backup's schemas first",
      ),
  ).action(async (dir: string, flags: StoreFlags & { replace?: boolean }) => {
    const stores = storesOf(flags);
    try {
      const report = await restore(dir, { ...stores, replace: flags.replace ?? false });
      print(
        flags,
        { databases: report.databases, objects: report.objects, tookMs: report.tookMs },
        `restored ${report.databases.join(' and ')} and ${report.objects} originals (${seconds(report.tookMs)})\nnext: start the services, then kb admin repair --from ${dir}\n`,
      );
    } finally {
      stores.store.destroy();
    }
  });

  admin
    .command('repair')
    .description(
      "After a restore: every document goes through its pipelines again (re-parse, re-embed through the cache, re-index). One tenant with --token (a tenant admin's), or each tenant of --from's manifest / --tenant with tokens signed by the local secret",
    )
    .option('--token <jwt>', "a tenant admin's bearer token (default: KB_TOKEN)", env['KB_TOKEN'])
    .option('--from <dir>', "repair every tenant the backup's manifest names (local secret)")
    .option('--tenant <id...>', 'repair these tenants (local secret)')
    .option(
      '--documents-url <url>',
      'document-service base URL',
      env['KB_DOCUMENTS_URL'] ?? 'http://127.0.0.1:3001',
    )
    .option('--json', 'print the result as one JSON object')
    .action(
      async (flags: {
        token?: string;
        from?: string;
        tenant?: string[];
        documentsUrl: string;
        json?: boolean;
      }) => {
        const tenants = flags.from
          ? (await readManifest(flags.from)).tenants
          : (flags.tenant ?? []);
        const repaired: Record<string, number> = {};
        if (tenants.length === 0) {
          if (!flags.token) throw new Error('give --token (KB_TOKEN), --tenant or --from');
          repaired['(token)'] = await repairTenant(flags.documentsUrl, flags.token);
        }
        for (const tenant of tenants) {
          const token = await localToken({ tenant, user: 'kb-admin-repair', roles: ['admin'] });
          repaired[tenant] = await repairTenant(flags.documentsUrl, token);
        }
        print(
          flags,
          { repaired },
          Object.entries(repaired)
            .map(([tenant, n]) => `${tenant}: ${n} documents sent through their pipelines again\n`)
            .join(''),
        );
      },
    );
}
