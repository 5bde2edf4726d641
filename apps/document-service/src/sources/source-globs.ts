import { minimatch } from 'minimatch';

/**
 * Whether a source takes the file at `path` (relative, "/" separated): it matches one of the
 * `include` globs (none: every file) and none of the `exclude` ones. Dot files match like any
 * other; minimatch semantics (`**` crosses folders).
 */
export function selects(source: { include: string[]; exclude: string[] }, path: string): boolean {
  const matches = (glob: string) =>
    minimatch(path, glob, { dot: true, matchBase: !glob.includes('/') });
  return (
    (source.include.length === 0 || source.include.some(matches)) && !source.exclude.some(matches)
  );
}
