// Integration and e2e tests need the real servers; fail fast with a clear message when unset.
for (const name of ['DATABASE_URL', 'KAFKA_BROKERS', 'S3_ENDPOINT', 'VECTOR_DATABASE_URL']) {
  if (!process.env[name]) {
    throw new Error(
      `${name} is not set: run tests through 'npm test' (it starts the servers) or source scripts/infra/env.sh`,
    );
  }
}
