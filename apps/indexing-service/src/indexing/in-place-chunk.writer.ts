import type { EditableAttributes, IndexSpace, TenantId } from '@kb/contracts';
import type { DocumentIndexState } from '@kb/index-state';
import type { LexicalIndex } from '@kb/lexical-index';
import type { VectorStore } from '@kb/vector-store';
import type { Logger } from '@nestjs/common';

/**
 * Writes a document's ACL and edited attributes into the chunks both indexes already hold, in
 * every index space of the document, in place (nothing is re-embedded). IndexingService records
 * the change first and bumps the generation after.
 */
export class InPlaceChunkWriter {
  constructor(
    private readonly vectors: VectorStore,
    private readonly lexical: LexicalIndex,
    private readonly state: DocumentIndexState,
    private readonly logger: Logger,
  ) {}

  /**
   * Writes edited attributes to the document's chunks in every space. A store that rewrites whole
   * records (Pinecone) writes `principals` with them: the ACL recorded when they were read (or,
   * none being recorded, what the store holds). An ACL change recorded and written meanwhile (an
   * `acl_changed`, a snapshot repair, a version being indexed) would then be overwritten by the
   * older list when the rewrite lands after it; so the recorded ACL is read again once the
   * rewrite is in, and written again when it is not the one given (review M8). A change recorded
   * after that read writes its own list after this rewrite.
   */
  async writeAttributes(
    tenantId: TenantId,
    documentId: string,
    attributes: EditableAttributes,
    principals: string[] | undefined,
  ): Promise<{ vectors: number; lexical: number }> {
    const counts = await this.inEverySpace(tenantId, documentId, (space) => [
      this.vectors.setAttributes(space, documentId, attributes, principals),
      this.lexical.setAttributes(space, documentId, attributes, principals),
    ]);
    const recorded = await this.state.principalsOf(tenantId, documentId);
    if (recorded && !(principals && sameList(recorded, principals))) {
      await this.writePrincipals(tenantId, documentId, recorded);
    }
    return counts;
  }

  /**
   * Writes principals to the document's chunks in every space. A concurrent change (another
   * partition's snapshot, a version being indexed) may have recorded a newer ACL and written it
   * before this write landed: the recorded one is written again until what was written is it.
   */
  async writePrincipals(
    tenantId: TenantId,
    documentId: string,
    principals: string[],
  ): Promise<{ vectors: number; lexical: number }> {
    let written = principals;
    for (let round = 1; ; round++) {
      const acl = written;
      const counts = await this.inEverySpace(tenantId, documentId, (space) => [
        this.vectors.setPrincipals(space, documentId, acl),
        this.lexical.setPrincipals(space, documentId, acl),
      ]);
      const recorded = await this.state.principalsOf(tenantId, documentId);
      if (!recorded || sameList(recorded, written) || round === 3) return counts;
      written = recorded;
    }
  }

  /**
   * Runs a change on a document in every index space holding it (one per pipeline of its
   * knowledge bases); `change` returns the vector and lexical counts it touched in that space.
   */
  async inEverySpace(
    tenantId: TenantId,
    documentId: string,
    change: (space: IndexSpace) => [Promise<number>, Promise<number>],
  ): Promise<{ vectors: number; lexical: number }> {
    const total = { vectors: 0, lexical: 0 };
    for (const space of await this.state.spacesOf(tenantId, documentId)) {
      const [vectors, lexical] = await Promise.all(change(space));
      total.vectors += vectors;
      total.lexical += lexical;
    }
    return total;
  }

  /**
   * Removes a document from the index spaces of pipelines it no longer has (it left every
   * knowledge base of that pipeline). Its own tenant space is left to `spaces` like any other.
   */
  async leaveSpaces(tenantId: TenantId, documentId: string, keep: IndexSpace[]): Promise<void> {
    for (const space of await this.state.spacesOf(tenantId, documentId)) {
      if (keep.includes(space)) continue;
      const [vectors] = await Promise.all([
        this.vectors.deleteDocument(space, documentId),
        this.lexical.deleteDocument(space, documentId),
      ]);
      await this.state.forgetSpace(tenantId, documentId, space);
      this.logger.log(`document ${documentId} left ${space}: ${vectors} vectors removed`);
    }
  }
}

export const sameList = (a: string[], b: string[]): boolean => a.join('\n') === b.join('\n');
