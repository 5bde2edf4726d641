import { PgVectorStore } from '../src';
import { DIM, vectorStoreConformance } from './support/conformance';

jest.setTimeout(60_000);

/** pgvector engine from `npm run infra:up` (PGlite with the vector extension, over the wire). */
describe('PgVectorStore', () => {
  const store = new PgVectorStore({ url: process.env['VECTOR_DATABASE_URL']! });
  beforeAll(() => store.ensureReady(DIM));
  afterAll(() => store.close());

  vectorStoreConformance(() => store);
});
