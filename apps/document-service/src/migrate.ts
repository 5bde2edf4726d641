import { createDatabase, createPool, migrateToLatest } from '@kb/database';
import { loadDocumentConfig } from './config/document.config';
import { migrations } from './migrations';

/** Applies this service's migrations and exits: run by `npm start` and the Helm migration hook. */
async function main(): Promise<void> {
  const config = loadDocumentConfig();
  const pool = createPool({
    url: config.DATABASE_URL,
    schema: config.DB_SCHEMA,
    maxConnections: 1,
  });
  try {
    const { applied } = await migrateToLatest(createDatabase(pool), config.DB_SCHEMA, migrations);
    console.log(JSON.stringify({ service: 'document-service', schema: config.DB_SCHEMA, applied }));
  } finally {
    await pool.end();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
