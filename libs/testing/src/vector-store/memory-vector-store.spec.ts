import { DIM, vectorStoreConformance } from '@kb/vector-store/test/support/conformance';

import { MemoryVectorStore } from './memory-vector-store';

describe('MemoryVectorStore', () => {
  const store = new MemoryVectorStore();
  beforeAll(() => store.ensureReady(DIM));

  vectorStoreConformance(() => store);
});
