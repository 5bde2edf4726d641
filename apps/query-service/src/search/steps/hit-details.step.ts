import type { DocumentView } from '@kb/api-client';
import type { Caller } from '@kb/auth';
import type { IndexSpace } from '@kb/contracts';
import type { ChunkLocation, LexicalIndex } from '@kb/lexical-index';
import { timedStage } from '@kb/observability';
import { Inject, Injectable, Logger } from '@nestjs/common';

import { DocumentDetailsCache } from '../../documents/document-details.cache';
import { DocumentsClient } from '../../documents/documents.client';
import { LEXICAL_INDEX } from '../../platform/tokens';
import { chunkKey, type SearchHit } from '../search.model';
import type { StepResult } from './step.model';

export type DetailsSkipReason = 'documents_unavailable' | 'locations_unavailable';

/** The document-service reads this step makes, with the caller's own token. */
export type DocumentReader = Pick<DocumentsClient, 'get' | 'getMany'>;

/** What one read of documents answered: `gone` those absent, `failed` when it could not be made. */
interface DocumentsRead {
  records: Map<string, DocumentView>;
  gone: Set<string>;
  failed: boolean;
}

/**
 * Document reads started before the page is known: the documents of the first fusion's best
 * hits, read while RM3's second pass runs, so that the details step finds most of the page's
 * documents read or on their way instead of reading them after the page is cut. Made with the
 * caller's token, like the read they stand in for; one a prefetch could not make is made again.
 */
export class DocumentsPrefetch {
  private readonly reads = new Map<string, Promise<DocumentsRead>>();

  constructor(private readonly read: (ids: string[]) => Promise<DocumentsRead>) {}

  /** Starts a read of the documents among `ids` that no earlier call asked for. */
  add(ids: readonly string[]): void {
    const fresh = [...new Set(ids)].filter((id) => !this.reads.has(id));
    if (fresh.length === 0) return;
    const read = this.read(fresh);
    for (const id of fresh) this.reads.set(id, read);
  }

  /** The reads that cover some of `ids`, with the ids each covers; `rest`: those none covers. */
  covering(ids: string[]): { reads: Map<Promise<DocumentsRead>, string[]>; rest: string[] } {
    const reads = new Map<Promise<DocumentsRead>, string[]>();
    const rest: string[] = [];
    for (const id of ids) {
      const read = this.reads.get(id);
      if (read) reads.set(read, [...(reads.get(read) ?? []), id]);
      else rest.push(id);
    }
    return { reads, rest };
  }
}

/**
 * What a caller needs beside a hit's text: where the chunk sits (page, heading path, kept by the
 * lexical index) and its document's tags, metadata, content type, file name and times (read
 * from document-service, which owns them, with the caller's token, so the same ACL applies; one
 * listing call for the page's documents not in `DocumentDetailsCache`, which keeps each token's
 * answers until an event about the document, or 30 s: docs/adr/0045). Runs on the final page
 * only. A document that is gone (absent from the listing: deleted, or no longer readable by the
 * caller) takes its hits with it: the indexes trail a delete by as long as
 * indexing-service takes to apply it (after emptying a knowledge base, seconds), while the
 * document's owner says at once, and the cache as soon as the delete's event reaches it
 * (docs/adr/0024). Any other failure leaves the hits as they are,
 * and the outcome says `skipped` so the answer is not cached.
 */
@Injectable()
export class HitDetailsStep {
  private readonly logger = new Logger(HitDetailsStep.name);

  constructor(
    @Inject(LEXICAL_INDEX) private readonly lexical: Pick<LexicalIndex, 'locations'>,
    @Inject(DocumentsClient) private readonly documents: DocumentReader,
    private readonly cache: DocumentDetailsCache,
  ) {}

  /** Reads of the caller's documents that `run` will take up (`DocumentsPrefetch`). */
  prefetch(caller: Caller): DocumentsPrefetch {
    return new DocumentsPrefetch((ids) => this.read(caller, ids));
  }

  /**
   * `caller` undefined (an internal caller without a token): locations only. `prefetched`: the
   * reads of `prefetch(caller)`, taken up for the documents they cover.
   */
  async run(
    hits: SearchHit[],
    spaceOf: (hit: SearchHit) => IndexSpace,
    caller: Caller | undefined,
    prefetched?: DocumentsPrefetch,
  ): Promise<StepResult<DetailsSkipReason> & { gone: Set<string> }> {
    const gone = new Set<string>();
    if (hits.length === 0) return { hits, outcome: 'applied', gone };
    const [locations, documents] = await Promise.all([
      timedStage('locations', () => this.locate(hits, spaceOf)),
      caller
        ? timedStage('documents', () =>
            this.readAll(caller, [...new Set(hits.map((h) => h.documentId))], prefetched),
          )
        : undefined,
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

  /** The documents by id, as `read` answers: those a prefetch covers from it, the rest read now. */
  private async readAll(
    caller: Caller,
    ids: string[],
    prefetched: DocumentsPrefetch | undefined,
  ): Promise<DocumentsRead> {
    if (!prefetched) return this.read(caller, ids);
    const { reads, rest } = prefetched.covering(ids);
    const answers = await Promise.all([
      ...[...reads].map(([read, covered]) =>
        read.then((answer) => (answer.failed ? this.read(caller, covered) : answer)),
      ),
      ...(rest.length > 0 ? [this.read(caller, rest)] : []),
    ]);
    const records = new Map(answers.flatMap((answer) => [...answer.records]));
    const failed = answers.some((answer) => answer.failed);
    // A prefetch read more documents than the page holds: only the page's are kept.
    const page = new Map(ids.flatMap((id) => (records.has(id) ? [[id, records.get(id)!]] : [])));
    const gone = failed ? new Set<string>() : new Set(ids.filter((id) => !page.has(id)));
    return { records: page, gone, failed };
  }

  /**
   * The documents by id: those the cache holds for the caller's token, the rest read in one call
   * (`getMany`: the caller's listing, so documents that are gone or that the caller may no longer
   * read are absent); `gone`: those absent; `failed` when they could not be read at all.
   */
  private async read(caller: Caller, ids: string[]): Promise<DocumentsRead> {
    try {
      const cached = this.cache.lookup(caller, ids);
      if (cached.missing.length === 0)
        return { records: cached.found, gone: new Set(), failed: false };
      const read = await this.documents.getMany(caller, cached.missing);
      this.cache.store(caller, read, cached.since);
      const records = new Map([...cached.found, ...read]);
      // Deleted (or made unreadable) since it was indexed: its hits go.
      const gone = new Set(ids.filter((id) => !records.has(id)));
      return { records, gone, failed: false };
    } catch (error) {
      this.logger.warn(`documents unreadable for hit details: ${String(error)}`);
      return { records: new Map(), gone: new Set(), failed: true };
    }
  }
}

const locationFields = (location: ChunkLocation): Pick<SearchHit, 'page' | 'headingPath'> => ({
  ...(location.page === undefined ? {} : { page: location.page }),
  headingPath: location.headingPath ?? [],
});

const documentFields = (
  document: DocumentView,
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
