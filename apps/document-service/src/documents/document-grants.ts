import type { DocumentAcl, Grantees } from './document.model';
import { DocumentError, DocumentErrorCode } from './documents.errors';

/** A new ACL's ends must lie ahead: one already passed would grant nothing (docs/adr/0054). */
export function requireFutureEnds(acl: DocumentAcl, now: Date): void {
  const past = Object.entries(acl.until ?? {}).filter(([, end]) => Date.parse(end) <= +now);
  if (past.length > 0) {
    throw new DocumentError(
      DocumentErrorCode.InvalidAcl,
      `acl.until: ${past.map(([p]) => p).join(', ')} must end in the future`,
    );
  }
}

/**
 * The ACL without the users' and groups' entries that ended at `now` (as reader, writer and
 * deleter), or undefined when none has. Used by the ended-grant job; the indexes stopped
 * honouring them at their end already.
 */
export function withoutEnded(acl: DocumentAcl, now: Date): DocumentAcl | undefined {
  const ended = new Set(
    Object.entries(acl.until ?? {})
      .filter(([, end]) => Date.parse(end) <= +now)
      .map(([p]) => p),
  );
  if (ended.size === 0) return undefined;
  const keep = (grantees: Grantees): Grantees => ({
    users: grantees.users.filter((u) => !ended.has(`u:${u}`)),
    groups: grantees.groups.filter((g) => !ended.has(`g:${g}`)),
  });
  const until = Object.fromEntries(Object.entries(acl.until!).filter(([p]) => !ended.has(p)));
  const { until: _ended, writers, deleters, ...rest } = acl;
  return {
    ...rest,
    ...keep(acl),
    ...(writers ? { writers: keep(writers) } : {}),
    ...(deleters ? { deleters: keep(deleters) } : {}),
    ...(Object.keys(until).length > 0 ? { until } : {}),
  };
}
