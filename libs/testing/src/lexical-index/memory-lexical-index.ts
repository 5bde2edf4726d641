import type { EditableAttributes, IndexSpace } from '@kb/contracts';
import {
  type ChunkLocation,
  type ChunkRef,
  type ChunkText,
  type LexicalConstraint,
  type LexicalIndex,
  type LexicalMatch,
  type LexicalQuery,
  type LexicalRecord,
  type LexicalWrite,
  parseLexicalQuery,
  type TermVector,
} from '@kb/lexical-index';

import { documentVersionsOf, inScope } from '../shared/chunk-scope';
import { englishTerms } from './english-terms';

/** BM25 parameters of `PgLexicalIndex` (Anserini's defaults). */
const K1 = 0.9;
const B = 0.4;

interface Stored extends LexicalWrite {
  /** Term frequencies of title and text. */
  terms: Map<string, number>;
  length: number;
}

const keyOf = (c: ChunkRef): string => `${c.documentId}#${c.documentVersion}#${c.chunkIndex}`;

const recordOf = ({
  terms: _t,
  length: _l,
  attributes: _a,
  page: _p,
  headingPath: _h,
  ...record
}: Stored): LexicalRecord => record;

const byDocumentThenChunk = (a: LexicalRecord, b: LexicalRecord): number =>
  a.documentId < b.documentId
    ? -1
    : a.documentId > b.documentId
      ? 1
      : a.documentVersion - b.documentVersion || a.chunkIndex - b.chunkIndex;

/**
 * An in-memory `LexicalIndex`: Okapi BM25 with the real adapter's parameters and statistics per
 * space over the caller's readable chunks, over `englishTerms` instead of Postgres' full-text
 * configuration.
 */
export class MemoryLexicalIndex implements LexicalIndex {
  private readonly spaces = new Map<IndexSpace, Map<string, Stored>>();

  async upsert(space: IndexSpace, records: LexicalWrite[]): Promise<void> {
    const held = this.spaces.get(space) ?? new Map<string, Stored>();
    this.spaces.set(space, held);
    for (const record of records) {
      const words = englishTerms(`${record.title}\n${record.text}`);
      const terms = new Map<string, number>();
      for (const word of words) terms.set(word, (terms.get(word) ?? 0) + 1);
      held.set(keyOf(record), { ...structuredClone(record), terms, length: words.length });
    }
  }

  async search(space: IndexSpace, query: LexicalQuery): Promise<LexicalMatch[]> {
    // Statistics over the chunks the caller may read, as in `PgLexicalIndex` (docs/adr/0019).
    const chunks = this.chunks(space).filter((chunk) =>
      inScope(chunk, { principals: query.principals }),
    );
    const queryTerms = [...new Set(englishTerms(query.text))];
    // 1 each (plain BM25), or RM3's λ shared by the query's terms plus the feedback terms' weights.
    const weights = new Map<string, number>(
      queryTerms.map((t) => [
        t,
        query.expansion ? query.expansion.queryWeight / queryTerms.length : 1,
      ]),
    );
    for (const { lexeme, weight } of query.expansion?.terms ?? []) {
      weights.set(lexeme, (weights.get(lexeme) ?? 0) + weight);
    }
    const terms = [...weights.keys()];
    const n = chunks.length;
    const avgdl = Math.max(chunks.reduce((sum, c) => sum + c.length, 0) / Math.max(n, 1), 1);
    const df = new Map(terms.map((t) => [t, chunks.filter((c) => c.terms.has(t)).length]));
    const scored: LexicalMatch[] = [];
    for (const chunk of chunks) {
      const matched = terms.filter((t) => chunk.terms.has(t));
      if (matched.length === 0 || !inScope(chunk, query)) continue;
      let score = 0;
      for (const term of matched) {
        const tf = chunk.terms.get(term)!;
        const idf = Math.log(1 + (n - df.get(term)! + 0.5) / (df.get(term)! + 0.5));
        score +=
          (weights.get(term)! * idf * (tf * (K1 + 1))) /
          (tf + K1 * (1 - B + (B * chunk.length) / avgdl));
      }
      scored.push({ ...recordOf(chunk), score });
    }
    return scored
      .sort((a, b) => b.score - a.score || byDocumentThenChunk(a, b))
      .slice(0, query.topK);
  }

  async deleteDocument(space: IndexSpace, documentId: string, olderThan?: number): Promise<number> {
    let removed = 0;
    for (const chunk of this.ofDocument(space, documentId)) {
      if (olderThan !== undefined && chunk.documentVersion >= olderThan) continue;
      this.spaces.get(space)?.delete(keyOf(chunk));
      removed++;
    }
    return removed;
  }

  async deleteDocuments(space: IndexSpace, documentIds: string[]): Promise<number> {
    let removed = 0;
    for (const documentId of new Set(documentIds)) {
      removed += await this.deleteDocument(space, documentId);
    }
    return removed;
  }

  async *documentVersions(
    space: IndexSpace,
  ): AsyncIterable<{ documentId: string; versions: number[] }> {
    yield* documentVersionsOf(this.chunks(space));
  }

  async setAttributes(
    space: IndexSpace,
    documentId: string,
    attributes: EditableAttributes,
  ): Promise<number> {
    const chunks = this.ofDocument(space, documentId);
    for (const chunk of chunks) {
      chunk.attributes = { ...chunk.attributes, ...structuredClone(attributes) };
    }
    return chunks.length;
  }

  async setPrincipals(
    space: IndexSpace,
    documentId: string,
    principals: string[],
  ): Promise<number> {
    const chunks = this.ofDocument(space, documentId);
    for (const chunk of chunks) chunk.attributes.principals = [...principals];
    return chunks.length;
  }

  async countDocument(space: IndexSpace, documentId: string): Promise<number> {
    return this.ofDocument(space, documentId).length;
  }

  async termVectors(space: IndexSpace, chunks: ChunkRef[]): Promise<Map<string, TermVector>> {
    const held = this.spaces.get(space);
    return new Map(
      chunks.flatMap((ref) => {
        const chunk = held?.get(keyOf(ref));
        return chunk
          ? [[keyOf(ref), { length: chunk.length, terms: new Map(chunk.terms) }] as const]
          : [];
      }),
    );
  }

  async texts(space: IndexSpace, chunks: ChunkRef[]): Promise<Map<string, ChunkText>> {
    const held = this.spaces.get(space);
    return new Map(
      chunks.flatMap((ref) => {
        const chunk = held?.get(keyOf(ref));
        return chunk ? [[keyOf(ref), { title: chunk.title, text: chunk.text }] as const] : [];
      }),
    );
  }

  async locations(space: IndexSpace, chunks: ChunkRef[]): Promise<Map<string, ChunkLocation>> {
    const held = this.spaces.get(space);
    return new Map(
      chunks.flatMap((ref) => {
        const chunk = held?.get(keyOf(ref));
        if (!chunk) return [];
        const location: ChunkLocation = {
          ...(chunk.page === undefined ? {} : { page: chunk.page }),
          headingPath: [...(chunk.headingPath ?? [])],
        };
        return [[keyOf(ref), location] as const];
      }),
    );
  }

  /**
   * The query's constraint checked on each chunk with this fake's rough terms: a word or phrase
   * holds when its terms appear in the chunk in that order, an identifier when the chunk's title
   * or text holds it as typed, case-insensitively. Postgres' phrase distance and stemming differ.
   */
  async matching(space: IndexSpace, query: string, chunks: ChunkRef[]): Promise<Set<string>> {
    const constraint = parseLexicalQuery(query).constraint;
    const held = this.spaces.get(space);
    return new Set(
      chunks
        .filter((ref) => {
          if (!constraint) return true;
          const chunk = held?.get(keyOf(ref));
          return chunk !== undefined && holds(constraint, `${chunk.title}\n${chunk.text}`);
        })
        .map(keyOf),
    );
  }

  async chunksAround(
    space: IndexSpace,
    anchors: ChunkRef[],
    radius: number,
  ): Promise<LexicalRecord[]> {
    if (radius <= 0) return [];
    return this.chunks(space)
      .filter((chunk) =>
        anchors.some(
          (a) =>
            a.documentId === chunk.documentId &&
            a.documentVersion === chunk.documentVersion &&
            Math.abs(a.chunkIndex - chunk.chunkIndex) <= radius,
        ),
      )
      .map(recordOf)
      .sort(byDocumentThenChunk);
  }

  async ping(): Promise<void> {}

  async close(): Promise<void> {}

  private chunks(space: IndexSpace): Stored[] {
    return [...(this.spaces.get(space)?.values() ?? [])];
  }

  private ofDocument(space: IndexSpace, documentId: string): Stored[] {
    return this.chunks(space).filter((chunk) => chunk.documentId === documentId);
  }
}

/**
 * Whether a text satisfies a constraint, with the fake's terms (see `matching`), in SQL's
 * three-valued logic as `constraintToSql` has it: a word or phrase without terms (stop words,
 * punctuation) is unknown, and an unknown answer at the top holds.
 */
function holds(constraint: LexicalConstraint, text: string): boolean {
  return truth(constraint, text) ?? true;
}

function truth(constraint: LexicalConstraint, text: string): boolean | null {
  switch (constraint.kind) {
    case 'word':
    case 'phrase': {
      const wanted = englishTerms(constraint.text);
      if (wanted.length === 0) return null;
      return ` ${englishTerms(text).join(' ')} `.includes(` ${wanted.join(' ')} `);
    }
    case 'literal':
      return text.toLowerCase().includes(constraint.text.toLowerCase());
    case 'and': {
      const values = constraint.items.map((item) => truth(item, text));
      if (values.includes(false)) return false;
      return values.includes(null) ? null : true;
    }
    case 'or': {
      const values = constraint.items.map((item) => truth(item, text));
      if (values.includes(true)) return true;
      return values.includes(null) ? null : false;
    }
    case 'not': {
      const value = truth(constraint.item, text);
      return value === null ? null : !value;
    }
  }
}
