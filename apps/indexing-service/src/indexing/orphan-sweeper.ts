import { tenantOfSpace } from '@kb/contracts';
import type { LexicalIndex, PgIndexGenerations } from '@kb/lexical-index';
import { PeriodicTask } from '@kb/http';
import { meter } from '@kb/observability';
import type { DocumentVersions, VectorStore } from '@kb/vector-store';
import {
  Inject,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { INDEXING_CONFIG, type IndexingConfig } from '../config/indexing.config';
import { GENERATIONS, LEXICAL_INDEX, VECTOR_STORE } from '../platform/tokens';

const orphansRemoved = meter().createCounter('kb_orphan_chunks_removed_total', {
  description: 'Chunks the orphan sweep removed, by index (vectors or lexical)',
});

/** What the indexes should hold of a document, from indexing's own bookkeeping. */
export interface IndexState {
  /** The version indexing claimed last. */
  version?: number;
  deleted: boolean;
}

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
  state: IndexState | undefined,
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
  documents(tenantId: string): AsyncIterable<DocumentVersions>;
  remove(tenantId: string, documentId: string, olderThan?: number): Promise<number>;
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
    @Inject(GENERATIONS)
    private readonly generations: Pick<PgIndexGenerations, 'allSpaces' | 'indexStates' | 'bump'>,
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
  async sweep(spaces?: string[]): Promise<SweepReport> {
    const report: SweepReport = { vectors: 0, lexical: 0, documents: [] };
    const indexes: SweptIndex[] = [
      {
        name: 'lexical',
        documents: (tenant) => this.lexical.documentVersions(tenant),
        remove: (tenant, doc, olderThan) => this.lexical.deleteDocument(tenant, doc, olderThan),
      },
    ];
    // The store is prepared by the first document this process indexes (pgvector learns its
    // table from the vectors' dimension); until then only the lexical index is swept.
    if (this.vectors.isReady()) {
      indexes.push({
        name: 'vectors',
        documents: (tenant) => this.vectors.documentVersions(tenant),
        remove: (tenant, doc, olderThan) => this.vectors.deleteDocument(tenant, doc, olderThan),
      });
    }
    const touched = new Set<string>();
    for (const tenant of spaces ?? (await this.generations.allSpaces())) {
      let removedInTenant = 0;
      for (const index of indexes) {
        let batch: DocumentVersions[] = [];
        const flush = async () => {
          const removed = await this.sweepBatch(tenant, index, batch, touched);
          report[index.name] += removed;
          removedInTenant += removed;
          batch = [];
        };
        for await (const entry of index.documents(tenant)) {
          batch.push(entry);
          if (batch.length >= BATCH) await flush();
        }
        await flush();
      }
      // Removed chunks may sit in cached results: a new generation retires them.
      if (removedInTenant > 0) await this.generations.bump(tenantOfSpace(tenant));
    }
    report.documents = [...touched];
    if (report.vectors + report.lexical > 0) {
      this.logger.warn(
        `orphan sweep: removed ${report.vectors} vectors and ${report.lexical} lexical rows of ${touched.size} documents`,
      );
    }
    return report;
  }

  private async sweepBatch(
    tenant: string,
    index: SweptIndex,
    batch: DocumentVersions[],
    touched: Set<string>,
  ): Promise<number> {
    if (batch.length === 0) return 0;
    const states = await this.generations.indexStates(
      tenant,
      batch.map((entry) => entry.documentId),
    );
    let removed = 0;
    for (const { documentId, versions } of batch) {
      const action = orphanAction(versions, states.get(documentId));
      if (!action) continue;
      const count = await index.remove(
        tenant,
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
