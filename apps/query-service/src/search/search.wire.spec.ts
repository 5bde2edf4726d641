import { kbv1 } from '@kb/contracts';

import type { SearchHit, SearchResponse } from './search.model';
import { serializeSearchResponse, toCachedSearchResponse, toSearchResponse } from './search.wire';

function hit(chunkIndex: number): SearchHit {
  return {
    documentId: '3f1c2a9e-8b7d-4c6e-9f0a-1b2c3d4e5f60',
    documentVersion: 1,
    chunkIndex,
    title: 'Saturn',
    text: `chunk ${chunkIndex}`,
    startOffset: 0,
    endOffset: 7,
    score: 1 / (chunkIndex + 1),
    strategies: ['lexical'],
    isMatch: true,
    metadata: { year: 2024, nested: { ok: true } },
    tags: ['planets'],
  };
}

function answer(hits: SearchHit[]): SearchResponse {
  return {
    hits,
    tookMs: 0.4,
    confidence: 'high',
    rerank: 'off',
    mmr: 'off',
    details: 'applied',
    cache: 'hit',
    mode: 'hybrid',
    queryType: 'question',
    total: hits.length,
    totalRelation: 'eq',
    degraded: false,
    nextOffset: 2,
  };
}

const decode = (bytes: Buffer) => kbv1.SearchResponse.decode(bytes);

describe('a search answer on the wire', () => {
  afterEach(() => jest.restoreAllMocks());

  it('sends a cached answer as the same message the plain mapping encodes', () => {
    const hits = Object.freeze([hit(0), hit(1), hit(2)]) as SearchHit[];
    const plain = decode(serializeSearchResponse(toSearchResponse(answer(hits))));
    const cached = decode(serializeSearchResponse(toCachedSearchResponse(answer(hits))));
    expect(cached).toEqual(plain);
    expect(cached.hits.map((h) => h.chunkIndex)).toEqual([0, 1, 2]);
    expect(cached.nextOffset).toBe(2);
  });

  it('encodes a cached answer’s hits once, and the rest of each answer every time', () => {
    const hits = Object.freeze([hit(0), hit(1)]) as SearchHit[];
    const encodeHit = jest.spyOn(kbv1.SearchHit, 'encode');
    const first = decode(serializeSearchResponse(toCachedSearchResponse(answer(hits))));
    const second = decode(
      serializeSearchResponse(toCachedSearchResponse({ ...answer(hits), tookMs: 9 })),
    );
    expect(encodeHit).toHaveBeenCalledTimes(2);
    expect(first.tookMs).toBe(0.4);
    expect(second.tookMs).toBe(9);
    expect(second.hits).toEqual(first.hits);
  });

  it('encodes the hits of an answer that is not cached (not frozen) each time', () => {
    const hits = [hit(0)];
    const encodeHit = jest.spyOn(kbv1.SearchHit, 'encode');
    serializeSearchResponse(toCachedSearchResponse(answer(hits)));
    hits.push(hit(1));
    const later = decode(serializeSearchResponse(toCachedSearchResponse(answer(hits))));
    expect(encodeHit).toHaveBeenCalledTimes(3);
    expect(later.hits.map((h) => h.chunkIndex)).toEqual([0, 1]);
  });
});
