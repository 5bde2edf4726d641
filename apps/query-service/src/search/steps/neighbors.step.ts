import type { IndexSpace } from '@kb/contracts';
import type { LexicalIndex, LexicalRecord } from '@kb/lexical-index';
import { Inject, Injectable, Logger } from '@nestjs/common';

import { LEXICAL_INDEX } from '../../platform/tokens';
import { chunkKey, type SearchHit } from '../search.model';
import type { StepResult } from './step.model';

export type NeighborsSkipReason = 'neighbors_unavailable';

/**
 * Adds up to `radius` chunks before and after each hit, read from the lexical index (which holds
 * every chunk's text), from the same document version only, so a neighbour never crosses into
 * another document. Each hit is followed by its neighbours in document order; a chunk already in
 * the results is not repeated. A failure to read neighbours leaves the hits as they are.
 */
@Injectable()
export class NeighborsStep {
  private readonly logger = new Logger(NeighborsStep.name);

  constructor(
    @Inject(LEXICAL_INDEX) private readonly lexical: Pick<LexicalIndex, 'chunksAround'>,
  ) {}

  /** `spaceOf` names the index space each hit came from: its neighbours are read there. */
  async run(
    hits: SearchHit[],
    radius: number,
    spaceOf: (hit: SearchHit) => IndexSpace,
  ): Promise<StepResult<NeighborsSkipReason>> {
    if (radius === 0) return { hits, outcome: 'off' };
    let around: LexicalRecord[];
    try {
      const bySpace = new Map<IndexSpace, SearchHit[]>();
      for (const hit of hits)
        bySpace.set(spaceOf(hit), [...(bySpace.get(spaceOf(hit)) ?? []), hit]);
      around = (
        await Promise.all(
          [...bySpace].map(([space, anchors]) => this.lexical.chunksAround(space, anchors, radius)),
        )
      ).flat();
    } catch (error) {
      this.logger.warn(`neighbours unavailable: ${String(error)}`);
      return { hits, outcome: { skipped: 'neighbors_unavailable' } };
    }
    const seen = new Set(hits.map(chunkKey));
    const result: SearchHit[] = [];
    for (const hit of hits) {
      const neighbours = around
        .filter(
          (c) =>
            c.documentId === hit.documentId &&
            c.documentVersion === hit.documentVersion &&
            Math.abs(c.chunkIndex - hit.chunkIndex) <= radius,
        )
        .sort((a, b) => a.chunkIndex - b.chunkIndex);
      for (const chunk of neighbours) {
        if (chunk.chunkIndex === hit.chunkIndex) {
          result.push(hit);
        } else if (!seen.has(chunkKey(chunk))) {
          seen.add(chunkKey(chunk));
          result.push({ ...chunk, score: hit.score, strategies: hit.strategies, isMatch: false });
        }
      }
      if (!neighbours.some((c) => c.chunkIndex === hit.chunkIndex)) result.push(hit);
    }
    return { hits: result, outcome: 'applied' };
  }
}
