import { PineconeStore } from '../src';
import { vectorStoreConformance } from './support/conformance';
import { FakePineconeDataPlane } from './support/fake-pinecone';

jest.setTimeout(60_000);

describe('PineconeStore against the FAKE Pinecone data plane', () => {
  const fake = new FakePineconeDataPlane();
  let store: PineconeStore;

  beforeAll(async () => {
    store = new PineconeStore({ apiKey: 'fake-key', indexHost: await fake.start() });
  });
  afterAll(() => fake.stop());

  vectorStoreConformance(() => store);

  it('speaks the data-plane endpoints the adapter is meant to use', () => {
    expect(new Set(fake.requests)).toEqual(
      new Set([
        'POST /vectors/upsert',
        'POST /query',
        'GET /vectors/fetch',
        'POST /vectors/update',
        'GET /vectors/list',
        'POST /vectors/delete',
      ]),
    );
  });
});

const apiKey = process.env['PINECONE_API_KEY'];
const indexHost = process.env['PINECONE_INDEX_HOST'];
const real = apiKey && indexHost ? describe : describe.skip;
if (!apiKey || !indexHost) {
  process.stdout.write(
    'PineconeStore against real Pinecone: SKIPPED (set PINECONE_API_KEY and PINECONE_INDEX_HOST of an 8-dimension cosine index)\n',
  );
}

real('PineconeStore against real Pinecone', () => {
  let store: PineconeStore;
  beforeAll(() => {
    store = new PineconeStore({ apiKey: apiKey ?? '', indexHost: indexHost ?? '' });
  });
  vectorStoreConformance(() => store);
});
