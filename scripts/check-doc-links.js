#!/usr/bin/env node
// Fails when a README or a document under docs/ points at a repository path that does not exist:
// a relative markdown link `[text](path)`, or a backticked path that starts at the repository root
// (`apps/…`, `libs/…`, `docs/…`, `scripts/…`, `test/…`, `helm/…`, `deploy/…`). Backticked paths
// with a placeholder or a pattern in them (`<svc>`, `*`, `{a,b}`, `…`) name a family of files and
// are not checked; a trailing `:line` or `:from-to` is dropped before the check. In a service's or
// a library's README a backticked path may also start at that package (`test/x.int-spec.ts`).
// Run from the repository root: `node scripts/check-doc-links.js` (exit 1 and a list when stale).
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const ROOTS = ['apps/', 'libs/', 'docs/', 'scripts/', 'test/', 'helm/', 'deploy/'];
const SKIP_DIRS = new Set(['node_modules', 'dist', '.git', '.nx', 'coverage']);

/** The markdown files whose links are checked, relative to `root`. */
function documents(root) {
  const found = [];
  const walk = (dir) => {
    let entries;
    try {
      entries = fs.readdirSync(path.join(root, dir), { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const rel = dir ? `${dir}/${entry.name}` : entry.name;
      if (entry.isDirectory()) {
        if (!SKIP_DIRS.has(entry.name)) walk(rel);
      } else if (entry.name === 'README.md' || (rel.startsWith('docs/') && rel.endsWith('.md'))) {
        found.push(rel);
      }
    }
  };
  // Every README in the tree (the top level, apps/*, libs/*, helm/…, deploy/…) and all of docs/.
  walk('');
  return found.sort();
}

/** The paths `text` (the markdown of `file`) points at, each with its line, relative to the root. */
function targets(file, text) {
  const out = [];
  const lines = text.split('\n');
  let fenced = false;
  lines.forEach((line, i) => {
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced;
      return;
    }
    if (fenced) return;
    for (const m of line.matchAll(/\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      const link = m[1];
      if (/^[a-z][a-z0-9+.-]*:/i.test(link) || link.startsWith('#') || link.startsWith('/'))
        continue;
      const bare = decodeURI(link.split('#')[0].split('?')[0]);
      if (bare)
        out.push({
          line: i + 1,
          raw: link,
          target: path.posix.normalize(path.posix.join(path.posix.dirname(file), bare)),
        });
    }
    // Backticked repository paths, outside the markdown links handled above.
    for (const m of line.replace(/\[[^\]]*\]\([^)]*\)/g, '').matchAll(/`([^`\s]+)`/g)) {
      const code = m[1];
      if (!ROOTS.some((r) => code.startsWith(r))) continue;
      if (/[<>*{}$…|]|\.\.\./.test(code)) continue;
      const bare = code.replace(/:\d+(-\d+)?(,\d+(-\d+)?)*$/, '').replace(/[.,;]$/, '');
      const pkg = /^(apps|libs)\/[^/]+\//.exec(file);
      const alternatives = pkg ? [path.posix.join(pkg[0], bare)] : [];
      out.push({ line: i + 1, raw: code, target: path.posix.normalize(bare), alternatives });
    }
  });
  return out;
}

/** Every link under `root` whose target is missing, as `file:line: raw`. */
function staleLinks(root) {
  const stale = [];
  for (const file of documents(root)) {
    const text = fs.readFileSync(path.join(root, file), 'utf8');
    for (const t of targets(file, text)) {
      const candidates = [t.target, ...(t.alternatives ?? [])];
      const exists = candidates.some(
        (c) => !c.startsWith('..') && fs.existsSync(path.join(root, c)),
      );
      if (!exists) {
        stale.push(`${file}:${t.line}: ${t.raw}`);
      }
    }
  }
  return stale;
}

module.exports = { documents, targets, staleLinks };

if (require.main === module) {
  const stale = staleLinks(process.cwd());
  if (stale.length > 0) {
    console.error(`Documents link ${stale.length} path(s) that do not exist:`);
    for (const s of stale) console.error(`  ${s}`);
    process.exit(1);
  }
}
