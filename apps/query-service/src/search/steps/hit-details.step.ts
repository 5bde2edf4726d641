import type { Caller } from '@kb/auth';
import type { IndexSpace } from '@kb/contracts';
import { DomainError, ErrorKind } from '@kb/errors';
import type { ChunkLocation, LexicalIndex } from '@kb/lexical-index';
import { Inject, Injectable, Logger } from '@nestjs/common';

import { type DocumentRecord, DocumentsClient } from '../../documents/documents.client';
import { LEXICAL_INDEX } from '../../platform/tokens';
import { chunkKey, type SearchHit } from '../search.model';
import type { StepResult } from './step.model';

export type DetailsSkipReason = 'documents_unavailable' | 'locations_unavailable';

/** Documents read at once from document-service. */
const CONCURRENCY = 8;

/** The document-service reads this step makes, with the caller's own token. */
export type DocumentReader = Pick<DocumentsClient, 'get'>;

/**
 * What a caller needs beside a hit's text: where the chunk sits (page, heading path, kept by the
 * lexical index) and its document's tags, metadata, content type, file name and times (read
 * from document-service, which owns them, with the caller's token: the same ACL applies, and an
 * edit shows at once). Runs on the final page only. A document that is gone (404: deleted, or no
 * longer readable by the caller) takes its hits with it: the indexes trail a delete by as long as
 * indexing-service takes to apply it (after emptying a knowledge base, seconds), and the
 * document's owner says at once (docs/adr/0024). Any other failure leaves the hits as they are,
 * and the outcome says `skipped` so the answer is not cached.
 */
@Injectable()
export class HitDetailsStep {
  private readonly logger = new Logger(HitDetailsStep.name);

  constructor(
    @Inject(LEXICAL_INDEX) private readonly lexical: Pick<LexicalIndex, 'locations'>,
    @Inject(DocumentsClient) private readonly documents: DocumentReader,
  ) {}

  /** `caller` undefined (an internal caller without a token): locations only. */
  async run(
    hits: SearchHit[],
    spaceOf: (hit: SearchHit) => IndexSpace,
    caller: Caller | undefined,
  ): Promise<StepResult<DetailsSkipReason> & { gone: Set<string> }> {
    const gone = new Set<string>();
    if (hits.length === 0) return { hits, outcome: 'applied', gone };
    const [locations, documents] = await Promise.all([
      this.locate(hits, spaceOf),
      caller ? this.read(caller, [...new Set(hits.map((h) => h.documentId))]) : undefined,
    ]);
    for (const id of documents?.gone ?? []) gone.add(id);
    const described = hits
      .filter((hit) => !gone.has(hit.documentId))
      .map((hit) => {
        const location = locations?.get(chunkKey(hit));
        const document = documents?.records.get(hit.documentId);
        return {
          ...hit,
          ...(location ? locationFields(location) : {}),
          ...(document ? documentFields(document) : {}),
        };
      });
    const reason: DetailsSkipReason | undefined = !locations
      ? 'locations_unavailable'
      : documents?.failed
        ? 'documents_unavailable'
        : undefined;
    return { hits: described, outcome: reason ? { skipped: reason } : 'applied', gone };
  }

  private async locate(
    hits: SearchHit[],
    spaceOf: (hit: SearchHit) => IndexSpace,
  ): Promise<Map<string, ChunkLocation> | undefined> {
    const bySpace = new Map<IndexSpace, SearchHit[]>();
    for (const hit of hits) bySpace.set(spaceOf(hit), [...(bySpace.get(spaceOf(hit)) ?? []), hit]);
    try {
      const found = await Promise.all(
        [...bySpace].map(([space, chunks]) => this.lexical.locations(space, chunks)),
      );
      return new Map(found.flatMap((m) => [...m]));
    } catch (error) {
      this.logger.warn(`chunk locations unavailable: ${String(error)}`);
      return undefined;
    }
  }

  /**
   * The documents by id; `gone`: those answered 404; `failed` when some could not be read for
   * another reason.
   */
  private async read(
    caller: Caller,
    ids: string[],
  ): Promise<{ records: Map<string, DocumentRecord>; gone: Set<string>; failed: boolean }> {
    const records = new Map<string, DocumentRecord>();
    const gone = new Set<string>();
    let failed = false;
    const queue = [...ids];
    const worker = async (): Promise<void> => {
      for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
        try {
          records.set(id, await this.documents.get(caller, id));
        } catch (error) {
          // Deleted (or made unreadable) since it was indexed: its hits go.
          if (error instanceof DomainError && error.kind === ErrorKind.NotFound) {
            gone.add(id);
            continue;
          }
          this.logger.warn(`document ${id} unreadable for hit details: ${String(error)}`);
          failed = true;
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, ids.length) }, worker));
    return { records, gone, failed };
  }
}

const locationFields = (location: ChunkLocation): Pick<SearchHit, 'page' | 'headingPath'> => ({
  ...(location.page === undefined ? {} : { page: location.page }),
  headingPath: location.headingPath ?? [],
});

const documentFields = (
  document: DocumentRecord,
): Pick<
  SearchHit,
  'tags' | 'metadata' | 'contentType' | 'filename' | 'createdAt' | 'updatedAt'
> => ({
  tags: document.tags,
  metadata: document.metadata,
  contentType: document.contentType,
  filename: document.filename,
  createdAt: document.createdAt,
  updatedAt: document.updatedAt,
});
