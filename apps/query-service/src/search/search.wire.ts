import { kbv1 } from '@kb/contracts';

import type { SearchHit, SearchResponse } from './search.model';

/**
 * The wire form of a search answer, and the `kb.v1.KnowledgeBase` service definition the gRPC
 * transport serves with it.
 *
 * A cache hit returns the very hits array the result cache parsed and froze for its key
 * (`SearchResultCache`), so their protobuf encoding is the same on every hit: it is made once
 * per cached entry and kept beside it (`encodedHits`, weakly keyed by that array, so it goes when
 * the entry does), and the serializer puts those bytes in front of the rest of the message.
 * Protobuf allows it: a message is the concatenation of its fields, `hits` (field 1) included,
 * in any order. Encoding the hits of a CISI answer (ten chunks with their text and metadata) was
 * the largest single part of a hit's CPU in query-service (docs/adr/0029, ninth pass).
 */
const ENCODED_HITS = Symbol('kb.search.encodedHits');

type WireSearchResponse = kbv1.SearchResponse & { [ENCODED_HITS]?: Uint8Array };

const encodedHits = new WeakMap<readonly SearchHit[], Uint8Array>();

export function toSearchResponse(response: SearchResponse): kbv1.SearchResponse {
  return {
    tookMs: response.tookMs,
    degraded: response.degraded,
    degradedReason: response.degradedReason ?? '',
    cacheHit: response.cache === 'hit',
    confidence: response.confidence,
    rerank: response.rerank,
    mmr: response.mmr,
    nextOffset: response.nextOffset,
    queryType: response.queryType,
    total: response.total,
    totalRelation: response.totalRelation,
    mode: response.mode,
    hits: response.hits.map(toWireHit),
  };
}

/**
 * `toSearchResponse`, with the hits of a frozen (cached, shared) array sent as the bytes encoded
 * the first time. The message's own `hits` is then empty: only `knowledgeBaseService`'s
 * serializer knows to add them.
 */
export function toCachedSearchResponse(response: SearchResponse): kbv1.SearchResponse {
  if (!Object.isFrozen(response.hits)) return toSearchResponse(response);
  let hits = encodedHits.get(response.hits);
  if (!hits) {
    hits = kbv1.SearchResponse.encode(
      kbv1.SearchResponse.fromPartial({ hits: response.hits.map(toWireHit) }),
    ).finish();
    encodedHits.set(response.hits, hits);
  }
  // Enumerable, so a shallow copy of the message on its way to the serializer keeps it.
  const message: WireSearchResponse = toSearchResponse({ ...response, hits: [] });
  message[ENCODED_HITS] = hits;
  return message;
}

/** A hit in the wire format: absent document fields are empty, an absent page unset. */
export function toWireHit(hit: SearchHit): kbv1.SearchHit {
  return {
    documentId: hit.documentId,
    documentVersion: hit.documentVersion,
    chunkIndex: hit.chunkIndex,
    text: hit.text,
    score: hit.score,
    title: hit.title,
    startOffset: hit.startOffset,
    endOffset: hit.endOffset,
    strategies: hit.strategies,
    isMatch: hit.isMatch,
    tags: hit.tags ?? [],
    metadata: hit.metadata,
    contentType: hit.contentType ?? '',
    filename: hit.filename ?? '',
    createdAt: hit.createdAt ?? '',
    updatedAt: hit.updatedAt ?? '',
    page: hit.page,
    headingPath: hit.headingPath ?? [],
  };
}

/** `Search`'s answer as bytes: pre-encoded hits first, then the rest of the message. */
export function serializeSearchResponse(message: WireSearchResponse): Buffer {
  const rest = kbv1.SearchResponse.encode(message).finish();
  const hits = message[ENCODED_HITS];
  return hits ? Buffer.concat([hits, rest]) : Buffer.from(rest);
}

/** The generated definition, with `Search` answered through `serializeSearchResponse`. */
export const knowledgeBaseService = {
  ...kbv1.KnowledgeBaseService,
  search: { ...kbv1.KnowledgeBaseService.search, responseSerialize: serializeSearchResponse },
} satisfies typeof kbv1.KnowledgeBaseService;
