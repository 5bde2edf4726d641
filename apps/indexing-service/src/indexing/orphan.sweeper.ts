import { type IndexSpace, tenantOfSpace, tenantSpace } from '@kb/contracts';
import type { DocumentIndexState, IndexGenerations, SpaceState } from '@kb/index-state';
import type { LexicalIndex } from '@kb/lexical-index';
import { meter } from '@kb/observability';
import { PeriodicTask } from '@kb/timing';
import type { DocumentVersions, VectorStore } from '@kb/vector-store';
import {
  type BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
} from '@nestjs/common';

import { INDEXING_CONFIG, type IndexingConfig } from '../config/indexing.config';
import { GENERATIONS, INDEX_STATE, LEXICAL_INDEX, VECTOR_STORE } from '../platform/tokens';

const orphansRemoved = meter().createCounter('kb_orphan_chunks_removed_total', {
  description: 'Chunks the orphan sweep removed, by index (vectors or lexical)',
});

export type OrphanAction = { remove: 'all' } | { remove: 'older'; than: number };

/**
 * What to remove of a document the index holds these versions of:
 * - deleted (tombstoned) → everything: chunks written by a version that raced the delete;
 * - the claimed version present → older versions: a slower, older version written after the
 *   newer one had already removed its predecessors;
 * - otherwise nothing: a claimed version not yet present is being written now (its predecessor
 *   stays visible until it is in), and a document indexing never claimed predates the
 *   bookkeeping, so it is not assumed orphaned.
 */
export function orphanAction(
  versions: number[],
  state: SpaceState | undefined,
): OrphanAction | undefined {
  if (!state) return undefined;
  if (state.deleted) return { remove: 'all' };
  const claimed = state.version;
  if (claimed === undefined || !versions.includes(claimed)) return undefined;
  return versions.some((v) => v < claimed) ? { remove: 'older', than: claimed } : undefined;
}

export interface SweepReport {
  /** Chunks removed from the vector store and from the lexical index. */
  vectors: number;
  lexical: number;
  /** Documents that had orphaned chunks in either index. */
  documents: string[];
}

interface SweptIndex {
  name: 'vectors' | 'lexical';
  documents(space: IndexSpace): AsyncIterable<DocumentVersions>;
  remove(space: IndexSpace, documentId: string, olderThan?: number): Promise<number>;
}

const BATCH = 500;

/**
 * Finds chunks no document accounts for and removes them: in both indexes, for every tenant,
 * every `ORPHAN_SWEEP_INTERVAL_MS` (0 turns it off). Indexing avoids leaving them (tombstones,
 * version claims), but a version that races a delete or a newer version can still write after
 * the check; this is the backstop. Only indexing's own bookkeeping is consulted, so the sweep
 * needs no other service. Deleting is idempotent, so replicas may overlap harmlessly.
 */
@Injectable()
export class OrphanSweeper implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(OrphanSweeper.name);
  private readonly task: PeriodicTask;

  constructor(
    @Inject(VECTOR_STORE) private readonly vectors: VectorStore,
    @Inject(LEXICAL_INDEX) private readonly lexical: LexicalIndex,
    @Inject(GENERATIONS) private readonly generations: Pick<IndexGenerations, 'tenants' | 'bump'>,
    @Inject(INDEX_STATE)
    private readonly state: Pick<DocumentIndexState, 'allSpaces' | 'indexStates'>,
    @Inject(INDEXING_CONFIG)
    config: Pick<IndexingConfig, 'ORPHAN_SWEEP_INTERVAL_MS'>,
  ) {
    this.task = new PeriodicTask(
      'orphan sweep',
      config.ORPHAN_SWEEP_INTERVAL_MS,
      () => this.sweep(),
      this.logger,
    );
  }

  onApplicationBootstrap(): void {
    this.task.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.task.stop();
  }

  /** One pass over every index space (tenants' and pipelines'); `spaces` narrows it (tests). */
  async sweep(spaces?: IndexSpace[]): Promise<SweepReport> {
    const report: SweepReport = { vectors: 0, lexical: 0, documents: [] };
    const indexes: SweptIndex[] = [
      {
        name: 'lexical',
        documents: (space) => this.lexical.documentVersions(space),
        remove: (space, doc, olderThan) => this.lexical.deleteDocument(space, doc, olderThan),
      },
    ];
    // The store is prepared by the first document this process indexes (pgvector learns its
    // table from the vectors' dimension); until then only the lexical index is swept.
    if (this.vectors.isReady()) {
      indexes.push({
        name: 'vectors',
        documents: (space) => this.vectors.documentVersions(space),
        remove: (space, doc, olderThan) => this.vectors.deleteDocument(space, doc, olderThan),
      });
    }
    const touched = new Set<string>();
    for (const space of spaces ?? (await this.allSpaces())) {
      let removedInSpace = 0;
      for (const index of indexes) {
        let batch: DocumentVersions[] = [];
        const flush = async () => {
          const removed = await this.sweepBatch(space, index, batch, touched);
          report[index.name] += removed;
          removedInSpace += removed;
          batch = [];
        };
        for await (const entry of index.documents(space)) {
          batch.push(entry);
          if (batch.length >= BATCH) await flush();
        }
        await flush();
      }
      // Removed chunks may sit in cached results: a new generation retires them.
      if (removedInSpace > 0) await this.generations.bump(tenantOfSpace(space));
    }
    report.documents = [...touched];
    if (report.vectors + report.lexical > 0) {
      this.logger.warn(
        `orphan sweep: removed ${report.vectors} vectors and ${report.lexical} lexical rows of ${touched.size} documents`,
      );
    }
    return report;
  }

  /** The tenants' own spaces (each tenant with a generation) and every space holding a document. */
  private async allSpaces(): Promise<IndexSpace[]> {
    const [tenants, spaces] = await Promise.all([
      this.generations.tenants(),
      this.state.allSpaces(),
    ]);
    return [...new Set([...tenants.map(tenantSpace), ...spaces])].sort();
  }

  private async sweepBatch(
    space: IndexSpace,
    index: SweptIndex,
    batch: DocumentVersions[],
    touched: Set<string>,
  ): Promise<number> {
    if (batch.length === 0) return 0;
    const states = await this.state.indexStates(
      space,
      batch.map((entry) => entry.documentId),
    );
    let removed = 0;
    for (const { documentId, versions } of batch) {
      const action = orphanAction(versions, states.get(documentId));
      if (!action) continue;
      const count = await index.remove(
        space,
        documentId,
        action.remove === 'older' ? action.than : undefined,
      );
      if (count > 0) touched.add(documentId);
      removed += count;
    }
    orphansRemoved.add(removed, { index: index.name });
    return removed;
  }
}
