/**
 * What a sync of a source does (docs/adr/0026), decided from what the source holds now and what
 * the knowledge base holds from it, both keyed by the file's path relative to the source. The
 * CLI's folder sync plans with this function; the server's S3 sync applies the same rule one
 * object at a time, so it never holds a whole bucket (security review N2).
 */
export interface SourceFile {
  /** Relative to the source's root, with "/" separators. */
  path: string;
  sha256: string;
}

export interface SyncedDocument {
  /** Relative path (the document's externalId without the source's prefix). */
  path: string;
  documentId: string;
  sha256: string;
}

export interface SyncPlan {
  add: SourceFile[];
  /** Changed content: a new version of `documentId`. */
  update: Array<SourceFile & { documentId: string }>;
  unchanged: SourceFile[];
  /** Gone from the source: the document is deleted. */
  delete: SyncedDocument[];
}

export function planSync(files: SourceFile[], synced: SyncedDocument[]): SyncPlan {
  const byPath = new Map(synced.map((d) => [d.path, d]));
  const present = new Set(files.map((f) => f.path));
  const plan: SyncPlan = { add: [], update: [], unchanged: [], delete: [] };
  for (const file of files) {
    const document = byPath.get(file.path);
    if (!document) plan.add.push(file);
    else if (document.sha256 === file.sha256) plan.unchanged.push(file);
    else plan.update.push({ ...file, documentId: document.documentId });
  }
  plan.delete = synced.filter((d) => !present.has(d.path));
  return plan;
}
