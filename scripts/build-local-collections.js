// Builds two judged known-item collections in BEIR layout from documents every Debian machine of
// this project has, so fusion can be checked beyond CISI without downloading a data set:
//
// - debian-packages: the installed packages' descriptions (dpkg status). Query: the package's
//   one-line synopsis, written by its maintainer to say what the package is. Document: the
//   package name (title) and its long description. Relevant: that package.
// - manpages: section 1 manual pages. Query: the NAME line's description ("list directory
//   contents"). Document: the command name(s) (title) and the first 1,200 characters of the
//   DESCRIPTION section. Relevant: that page.
//
// The judgment is the author's own statement that the short text describes that document (the
// known-item construction). Ambiguous items are dropped: a query text shared by several items, a
// document text shared by several items, too short a query (< 3 words) or document (< 80
// characters). Other documents may be relevant too and are unjudged, as in any known-item set.
// The result depends on what is installed: the script prints each collection's counts and a
// digest of its files, to compare machines.
//
// Usage: node scripts/build-local-collections.js [--out <folder>] [--max <documents>]
// (default out: $KB_HOME/datasets, else ~/.cache/kb/datasets; default max 600 per collection).
// Idempotent: a collection whose folder is complete is not rebuilt.
'use strict';
const { execFileSync } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const option = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? fallback : process.argv[i + 1];
};
const out = option(
  'out',
  path.join(process.env.KB_HOME || path.join(os.homedir(), '.cache', 'kb'), 'datasets'),
);
const max = Number(option('max', '600'));
const sha1 = (text) => crypto.createHash('sha1').update(text).digest('hex');
const squash = (text) => text.replace(/\s+/g, ' ').trim();

/** Keeps items whose query and document are each unique and long enough; at most `max`, by hash. */
function unambiguous(items) {
  const count = (key) => {
    const n = new Map();
    for (const item of items) n.set(key(item), (n.get(key(item)) ?? 0) + 1);
    return n;
  };
  const queries = count((x) => x.query.toLowerCase());
  const texts = count((x) => x.text.toLowerCase());
  return items
    .filter(
      (x) =>
        queries.get(x.query.toLowerCase()) === 1 &&
        texts.get(x.text.toLowerCase()) === 1 &&
        x.query.split(' ').length >= 3 &&
        x.text.length >= 80,
    )
    .sort((a, b) => (sha1(a.id) < sha1(b.id) ? -1 : 1))
    .slice(0, max)
    .sort((a, b) => (a.id < b.id ? -1 : 1));
}

function write(name, items) {
  const folder = path.join(out, name);
  if (fs.existsSync(path.join(folder, 'qrels', 'test.tsv'))) {
    process.stdout.write(`${name}: exists in ${folder}, kept\n`);
    return;
  }
  fs.mkdirSync(path.join(folder, 'qrels'), { recursive: true });
  const corpus = items.map((x) => JSON.stringify({ _id: x.id, title: x.title, text: x.text }));
  const queries = items.map((x) => JSON.stringify({ _id: `q-${x.id}`, text: x.query }));
  const qrels = ['query-id\tcorpus-id\tscore', ...items.map((x) => `q-${x.id}\t${x.id}\t1`)];
  const files = {
    'corpus.jsonl': `${corpus.join('\n')}\n`,
    'queries.jsonl': `${queries.join('\n')}\n`,
    'qrels/test.tsv': `${qrels.join('\n')}\n`,
  };
  for (const [file, content] of Object.entries(files)) {
    fs.writeFileSync(path.join(folder, file), content);
  }
  const digest = sha1(Object.values(files).join('')).slice(0, 12);
  process.stdout.write(`${name}: ${items.length} documents and queries in ${folder} (${digest})\n`);
}

function debianPackages() {
  const status = fs.readFileSync('/var/lib/dpkg/status', 'utf8');
  const items = [];
  for (const stanza of status.split(/\n\n+/)) {
    const name = /^Package: (.+)$/m.exec(stanza)?.[1];
    const description = /^Description: (.*)\n((?: .*\n?)*)/m.exec(stanza);
    if (!name || !description) continue;
    const text = description[2]
      .split('\n')
      .map((line) => (line.trim() === '.' ? '\n' : line.trim()))
      .join(' ');
    items.push({
      id: name.replace(/[^\w.+-]/g, '_'),
      title: name,
      query: squash(description[1]),
      text: squash(text),
    });
  }
  return unambiguous(items);
}

function manPages() {
  const dir = '/usr/share/man/man1';
  const candidates = fs
    .readdirSync(dir)
    .filter((file) => {
      const stat = fs.lstatSync(path.join(dir, file));
      return stat.isFile() && !stat.isSymbolicLink();
    })
    .sort((a, b) => (sha1(a) < sha1(b) ? -1 : 1))
    .slice(0, Math.ceil(max * 1.6));
  const items = [];
  for (const file of candidates) {
    let page;
    try {
      page = execFileSync('man', ['-l', path.join(dir, file)], {
        env: { ...process.env, MANWIDTH: '100', MAN_KEEP_FORMATTING: '', LANG: 'C.UTF-8' },
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
        timeout: 20_000,
      });
    } catch {
      continue;
    }
    // Overstrike (bold, underline) removed, as `col -b` does.
    page = page.replace(/.\x08/g, '');
    const section = (title) => {
      const m = new RegExp(`^${title}\\n((?:[ \\t].*\\n|\\n)*)`, 'm').exec(page);
      return m ? squash(m[1]) : '';
    };
    const nameLine = section('NAME');
    const dash = nameLine.search(/ [-\u2010-\u2014] /);
    if (dash === -1) continue;
    const names = nameLine.slice(0, dash).trim();
    const query = nameLine.slice(dash + 3).trim();
    let text = section('DESCRIPTION');
    if (text.length > 1200) text = `${text.slice(0, 1200).replace(/\s+\S*$/, '')}`;
    items.push({
      id: file.replace(/\.gz$/, '').replace(/[^\w.+-]/g, '_'),
      title: names,
      query,
      text,
    });
  }
  return unambiguous(items);
}

write('debian-packages', debianPackages());
write('manpages', manPages());
