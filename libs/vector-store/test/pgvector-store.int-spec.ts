import { PgVectorStore } from '../src';
import { DIM, vectorStoreConformance } from './support/conformance';

jest.setTimeout(60_000);

/** The pgvector database from `npm run infra:up` (the extension built into the local Postgres). */
describe('PgVectorStore', () => {
  const store = new PgVectorStore({ url: process.env['VECTOR_DATABASE_URL']! });
  beforeAll(() => store.ensureReady(DIM));
  afterAll(() => store.close());

  vectorStoreConformance(() => store);
});
