import type { EditableAttributes, IndexSpace } from '@kb/contracts';
import { raceAbort } from '@kb/database';
import {
  type ChunkLocation,
  type ChunkRef,
  type ChunkText,
  type LexicalIndex,
  type LexicalMatch,
  type LexicalQuery,
  type LexicalRecord,
  type LexicalWrite,
  parseLexicalQuery,
  type SparseEncoder,
  type TermVector,
} from '@kb/lexical-index';
import {
  type Index,
  Pinecone,
  type PineconeRecord,
  type QueryOptions,
} from '@pinecone-database/pinecone';

import {
  attributeFields,
  type ChunkMetadata,
  PineconeDocuments,
  scopeFilter,
  UPSERT_BATCH,
} from './pinecone-documents';
import { capSparse, MAX_SPARSE_TOP_K } from './sparse-limits';
import { vectorId } from './vector-store';

/**
 * What PostgreSQL keeps beside the sparse index: each chunk's row (title, text, location,
 * readers, attributes) and postings, which answer the reads by reference and analyze text with
 * the index's `english` configuration. It ranks nothing. `PgLexicalIndex` is one.
 */
export type LexicalMetadata = Omit<LexicalIndex, 'search'> & {
  /** The distinct lexemes the index's text search configuration makes of a text. */
  analyze(text: string): Promise<string[]>;
};

export interface PineconeLexicalOptions {
  apiKey: string;
  /** Data-plane host of the sparse index (`vector_type: sparse`, metric `dotproduct`). */
  indexHost: string;
  /** Replaces global fetch; tests point it at the fake data plane. */
  fetchApi?: typeof fetch;
  metadata: LexicalMetadata;
  encoder: SparseEncoder;
}

/**
 * With typed syntax (phrases, operators) or identifiers, this many times top-k candidates are
 * asked of Pinecone and checked against the chunk rows in Postgres before the cut.
 */
const CHECKED_POOL = 5;
const ANALYSES = 2_000;

/**
 * BM25 as sparse vectors served by a Pinecone sparse index (docs/adr/0057): the lexical half of
 * a hybrid search when `VECTOR_STORE=pinecone`. Each chunk is one record under the same id and
 * namespace as its dense vector, with the encoder's document side as its sparse values and the
 * same filter fields, so the ACL, knowledge bases and filters go through the same translation
 * (`scopeFilter`). A search analyzes the query as the index does (Postgres `to_tsvector`), weighs
 * its lexemes (1 each, or RM3's λ and feedback weights), and asks Pinecone for the best dot
 * products. The statistics come from the encoder's fixed reference, so a score says nothing
 * about chunks the caller cannot read (docs/adr/0019). Typed syntax and identifiers are checked
 * on a larger pool against the chunk rows (`matching`, as hybrid search checks the semantic side).
 */
export class PineconeLexicalIndex implements LexicalIndex {
  private readonly index: Index<ChunkMetadata>;
  private readonly documents: PineconeDocuments;
  private readonly metadata: LexicalMetadata;
  private readonly encoder: SparseEncoder;
  private readonly analyses = new Map<string, string[]>();

  constructor(options: PineconeLexicalOptions) {
    const client = new Pinecone({
      apiKey: options.apiKey,
      ...(options.fetchApi ? { fetchApi: options.fetchApi } : {}),
    });
    this.index = client.index<ChunkMetadata>({ host: options.indexHost });
    this.documents = new PineconeDocuments(this.index);
    this.metadata = options.metadata;
    this.encoder = options.encoder;
  }

  /**
   * The rows first (Postgres analyzes the text into postings), then each chunk's term vector as
   * Postgres counted it, encoded, into Pinecone. A chunk without terms has no sparse record.
   */
  async upsert(space: IndexSpace, records: LexicalWrite[]): Promise<void> {
    if (records.length === 0) return;
    await this.metadata.upsert(space, records);
    const vectors = await this.metadata.termVectors(space, records);
    const sparse: Array<PineconeRecord<ChunkMetadata>> = [];
    const empty: string[] = [];
    for (const record of records) {
      const id = vectorId(record);
      const terms = vectors.get(id);
      const values = terms ? capSparse(this.encoder.document(terms)) : undefined;
      if (!values || values.indices.length === 0) {
        empty.push(id);
        continue;
      }
      sparse.push({
        id,
        sparseValues: values,
        metadata: {
          documentId: record.documentId,
          documentVersion: record.documentVersion,
          chunkIndex: record.chunkIndex,
          startOffset: record.startOffset,
          endOffset: record.endOffset,
          ...attributeFields(record.attributes),
        } as ChunkMetadata,
      });
    }
    const ns = this.index.namespace(space);
    for (let i = 0; i < sparse.length; i += UPSERT_BATCH) {
      await ns.upsert({ records: sparse.slice(i, i + UPSERT_BATCH) });
    }
    // A chunk rewritten without terms must not keep the sparse record of its earlier text.
    if (empty.length > 0) await ns.deleteMany({ ids: empty });
  }

  /** Past `query.signal` it rejects at once; the Pinecone request runs to its end (docs/adr/0042). */
  search(space: IndexSpace, query: LexicalQuery): Promise<LexicalMatch[]> {
    return raceAbort(this.ranked(space, query), query.signal);
  }

  private async ranked(space: IndexSpace, query: LexicalQuery): Promise<LexicalMatch[]> {
    const parsed = parseLexicalQuery(query.text);
    const lexemes = await this.analyzed(parsed.scoringText);
    const expansion = query.expansion;
    const own = expansion ? expansion.queryWeight / Math.max(lexemes.length, 1) : 1;
    const weights = new Map<string, number>();
    for (const lexeme of lexemes) weights.set(lexeme, own);
    for (const term of expansion?.terms ?? []) {
      weights.set(term.lexeme, (weights.get(term.lexeme) ?? 0) + term.weight);
    }
    const sparseVector = capSparse(this.encoder.query(weights));
    if (sparseVector.indices.length === 0) return [];
    const checked = parsed.constraint !== null || parsed.preferred.length > 0;
    const filter = scopeFilter(query);
    // The SDK's types want a dense vector; a sparse index is queried with the sparse one only.
    const options = {
      sparseVector,
      topK: Math.min(MAX_SPARSE_TOP_K, checked ? query.topK * CHECKED_POOL : query.topK),
      includeMetadata: true,
      ...(filter ? { filter } : {}),
    } as unknown as QueryOptions;
    const response = await this.index.namespace(space).query(options);
    let found = (response.matches ?? []).flatMap((match) =>
      match.metadata ? [{ metadata: match.metadata, score: match.score ?? 0 }] : [],
    );
    const refs = found.map(({ metadata }) => refOf(metadata));
    if (parsed.constraint) {
      const satisfied = await this.metadata.matching(space, query.text, refs);
      found = found.filter(({ metadata }) => satisfied.has(vectorId(metadata)));
    }
    const needTexts = query.withText !== false || parsed.preferred.length > 0;
    const texts = needTexts
      ? await this.metadata.texts(
          space,
          found.map((f) => refOf(f.metadata)),
        )
      : undefined;
    if (parsed.preferred.length > 0 && texts) {
      // An identifier typed among words: a chunk holding it whole, as typed, case-insensitively,
      // gains the pool's best score for each, so it ranks above those sharing only its parts.
      const best = Math.max(0, ...found.map((f) => f.score));
      const wanted = parsed.preferred.map((text) => text.toLowerCase());
      found = found
        .map((f) => {
          const text = texts.get(vectorId(f.metadata));
          const haystack = text ? `${text.title}\n${text.text}`.toLowerCase() : '';
          const held = wanted.filter((w) => haystack.includes(w)).length;
          return { metadata: f.metadata, score: f.score + held * best };
        })
        .sort((a, b) => b.score - a.score);
    }
    const matches: LexicalMatch[] = [];
    for (const { metadata, score } of found) {
      if (matches.length === query.topK) break;
      const text = texts ? texts.get(vectorId(metadata)) : { title: '', text: '' };
      // A chunk Postgres no longer holds (removed between the two writes) is left out.
      if (!text) continue;
      matches.push({
        ...refOf(metadata),
        title: query.withText === false ? '' : text.title,
        text: query.withText === false ? '' : text.text,
        startOffset: metadata.startOffset,
        endOffset: metadata.endOffset,
        score,
      });
    }
    return matches;
  }

  /** The query text's lexemes, as Postgres' `english` configuration makes them (kept per text). */
  private async analyzed(text: string): Promise<string[]> {
    const known = this.analyses.get(text);
    if (known) return known;
    const lexemes = await this.metadata.analyze(text);
    this.analyses.set(text, lexemes);
    if (this.analyses.size > ANALYSES) {
      this.analyses.delete(this.analyses.keys().next().value as string);
    }
    return lexemes;
  }

  // Removals and ACL changes reach Pinecone first: a failure there throws before Postgres
  // changes, so the retried event finds both to do (each step is idempotent), and Postgres never
  // forgets a chunk Pinecone still serves.

  async deleteDocument(space: IndexSpace, documentId: string, olderThan?: number): Promise<number> {
    await this.documents.deleteDocument(space, documentId, olderThan);
    return this.metadata.deleteDocument(space, documentId, olderThan);
  }

  async deleteDocuments(space: IndexSpace, documentIds: string[]): Promise<number> {
    if (documentIds.length === 0) return 0;
    await this.documents.deleteDocuments(space, documentIds);
    return this.metadata.deleteDocuments(space, documentIds);
  }

  /** `principals`: the ACL as recorded, written rather than what Pinecone reads back (review M8). */
  async setAttributes(
    space: IndexSpace,
    documentId: string,
    attributes: EditableAttributes,
    principals?: string[],
  ): Promise<number> {
    await this.documents.setAttributes(space, documentId, attributes, principals);
    return this.metadata.setAttributes(space, documentId, attributes);
  }

  async setPrincipals(
    space: IndexSpace,
    documentId: string,
    principals: string[],
  ): Promise<number> {
    await this.documents.setPrincipals(space, documentId, principals);
    return this.metadata.setPrincipals(space, documentId, principals);
  }

  /**
   * What either side holds, so the orphan sweep also finds sparse records whose rows are gone (a
   * write that raced a delete); its removal (`deleteDocument`) clears both. Pinecone lists ids,
   * so memory grows with the space's documents, as in `PineconeStore`.
   */
  async *documentVersions(
    space: IndexSpace,
  ): AsyncIterable<{ documentId: string; versions: number[] }> {
    const held = new Map<string, Set<number>>();
    for (const side of [
      this.documents.documentVersions(space),
      this.metadata.documentVersions(space),
    ]) {
      for await (const { documentId, versions } of side) {
        const seen = held.get(documentId) ?? new Set<number>();
        for (const version of versions) seen.add(version);
        held.set(documentId, seen);
      }
    }
    for (const documentId of [...held.keys()].sort()) {
      yield { documentId, versions: [...held.get(documentId)!].sort((a, b) => a - b) };
    }
  }

  countDocument(space: IndexSpace, documentId: string): Promise<number> {
    return this.metadata.countDocument(space, documentId);
  }

  texts(space: IndexSpace, chunks: ChunkRef[]): Promise<Map<string, ChunkText>> {
    return this.metadata.texts(space, chunks);
  }

  locations(space: IndexSpace, chunks: ChunkRef[]): Promise<Map<string, ChunkLocation>> {
    return this.metadata.locations(space, chunks);
  }

  termVectors(space: IndexSpace, chunks: ChunkRef[]): Promise<Map<string, TermVector>> {
    return this.metadata.termVectors(space, chunks);
  }

  matching(space: IndexSpace, query: string, chunks: ChunkRef[]): Promise<Set<string>> {
    return this.metadata.matching(space, query, chunks);
  }

  chunksAround(space: IndexSpace, anchors: ChunkRef[], radius: number): Promise<LexicalRecord[]> {
    return this.metadata.chunksAround(space, anchors, radius);
  }

  async ping(): Promise<void> {
    await Promise.all([this.metadata.ping(), this.index.describeIndexStats()]);
  }

  close(): Promise<void> {
    return this.metadata.close();
  }
}

function refOf(metadata: ChunkMetadata): ChunkRef {
  return {
    documentId: metadata.documentId,
    documentVersion: metadata.documentVersion,
    chunkIndex: metadata.chunkIndex,
  };
}
