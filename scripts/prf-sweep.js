// Offline sweep of pseudo-relevance feedback: on the semantic side Rocchio on the query vector
// (q' = q + β·mean of the vectors of the first pass's top k hits), fused with a saved lexical run;
// with --rm3, also RM3 on the lexical side (the query's terms plus the m terms most likely in the
// first pass's top k documents, weighted λ / 1 − λ, scored by the same BM25 SQL as
// @kb/lexical-index with a weight per term, over the same postings), fused with the semantic list;
// over knowledge bases that already hold judged collections (what `kb eval` ingested). Exact
// cosine over the knowledge base's stored chunk vectors (pgvector), the query embedded with the
// model's query prefix (embedQueries), each document's best chunk, the adaptive rule of
// query-service at document level; scored with `kb eval`'s metrics. Rules are ranked by their
// WORST relative gain over the better single mode across the sets, as scripts/fusion-sweep.js.
// Usage (infra up, `npm run build`; KB_HOME as for the services):
//   node scripts/prf-sweep.js --set <name>=<BEIR folder>,<model>,<tenant>,<knowledge base>,<lexical run>
//     [--set …] [--bm25 <name>=<nDCG@10 of plain BM25>] [--out <folder for the query vectors>]
//     [--rm3] [--no-rocchio]
// Prints one JSON line per rule: each set's nDCG@10 and `worst`.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { Client } = require('pg');
const { OnnxEmbeddingProvider } = require('../libs/embeddings/dist');
const { loadBeir, contentOf } = require('../apps/kb-cli/dist/eval/beir');
const { ndcgAt } = require('../apps/kb-cli/dist/eval/metrics');
const { parseLexicalQuery } = require('../libs/lexical-index/dist');
const { readRun } = require('./trec-run');

const argv = process.argv.slice(2);
const values = (name) =>
  argv.flatMap((a, i) => (a === `--${name}` && argv[i + 1] ? [argv[i + 1]] : []));
const kbHome = process.env.KB_HOME ?? path.join(require('node:os').homedir(), '.cache', 'kb');
const modelDir = process.env.EMBEDDING_MODEL_DIR ?? path.join(kbHome, 'models');
const outDir = values('out')[0] ?? path.join(kbHome, 'runs');
const databaseUrl = process.env.DATABASE_URL ?? 'postgres://kb:kb@127.0.0.1:5432/kb';
const vectorUrl = process.env.VECTOR_DATABASE_URL ?? 'postgres://kb:kb@127.0.0.1:5432/kb_vectors';

const normalize = (v) => {
  const n = Math.sqrt(v.reduce((s, x) => s + x * x, 0)) || 1;
  return v.map((x) => x / n);
};

async function loadSet(spec, providers) {
  const [name, files] = spec.split('=');
  const [folder, model, tenant, kb, lexicalRun] = files.split(',');
  const dataset = await loadBeir(folder);
  // Corpus ids by content: identical entries are one document (as `kb eval` maps them).
  const idsByContent = new Map();
  for (const entry of dataset.corpus) {
    const c = contentOf(entry);
    idsByContent.set(c, [...(idsByContent.get(c) ?? []), entry._id]);
  }
  const idsOf = new Map([...idsByContent.values()].flatMap((ids) => ids.map((id) => [id, ids])));
  const db = new Client({ connectionString: databaseUrl });
  await db.connect();
  const docs = await db.query(
    `select id, coalesce(metadata->>'externalId', regexp_replace(filename, '\\.[^.]*$', '')) as ext
       from document_service.documents
      where tenant_id = $1 and $2 = any(knowledge_base_ids) and status = 'indexed'`,
    [tenant, kb],
  );
  await db.end();
  const corpusIdsOf = new Map(docs.rows.map((r) => [r.id, idsOf.get(r.ext) ?? [r.ext]]));
  const vdb = new Client({ connectionString: vectorUrl });
  await vdb.connect();
  const rows = await vdb.query(
    `select document_id, embedding::text as e from kb_vectors_384
      where split_part(namespace, '~', 1) = $1 and $2 = any(kb_ids)`,
    [tenant, kb],
  );
  await vdb.end();
  const chunks = rows.rows
    .filter((r) => corpusIdsOf.has(r.document_id))
    .map((r) => ({ doc: r.document_id, v: Float32Array.from(normalize(JSON.parse(r.e))) }));
  // Query vectors, cached per model and collection (embedding is the slow part). Each query is
  // embedded alone, as query-service does: the int8 models quantize a run together, so a query
  // batched with others gets a vector that depends on them (docs/adr/0028, "Deterministic vectors").
  const cacheFile = path.join(outDir, `qvec-alone-${path.basename(folder)}-${model}.json`);
  let qvec;
  if (fs.existsSync(cacheFile)) {
    qvec = new Map(Object.entries(JSON.parse(fs.readFileSync(cacheFile, 'utf8'))));
  } else {
    if (!providers.has(model)) {
      providers.set(model, await OnnxEmbeddingProvider.load({ modelDir, model, threads: 2 }));
    }
    const provider = providers.get(model);
    qvec = new Map();
    for (const query of dataset.queries) {
      const [vector] = await provider.embedQueries([query.text.trim().replace(/\s+/g, ' ')]);
      qvec.set(query._id, vector);
    }
    fs.writeFileSync(cacheFile, JSON.stringify(Object.fromEntries(qvec)));
  }
  const qrels = dataset.qrels;
  const lexical = readRun(lexicalRun);
  // The lexical index space of the knowledge base's pipeline (the tenant, or tenant~pipeline).
  const space = rows.rows.length
    ? await (async () => {
        const c = new Client({ connectionString: vectorUrl });
        await c.connect();
        const r = await c.query(
          `select namespace from kb_vectors_384 where $1 = any(kb_ids) limit 1`,
          [kb],
        );
        await c.end();
        return r.rows[0].namespace;
      })()
    : tenant;
  const documentOf = new Map(
    [...corpusIdsOf].flatMap(([documentId, ids]) => ids.map((id) => [id, documentId])),
  );
  process.stderr.write(
    `${name}: ${dataset.queries.length} queries, ${docs.rows.length} documents, ${chunks.length} chunks\n`,
  );
  return {
    name,
    queries: dataset.queries,
    qrels,
    lexical,
    chunks,
    corpusIdsOf,
    documentOf,
    space,
    qvec,
  };
}

/** Top `depth` chunks by cosine, as document-level lists (corpus ids) with each doc's best chunk. */
function semanticSearch(set, vector, depth = 100) {
  const q = Float32Array.from(normalize(vector));
  const scored = set.chunks.map((c, i) => {
    let s = 0;
    for (let d = 0; d < q.length; d++) s += q[d] * c.v[d];
    return { i, s };
  });
  scored.sort((a, b) => b.s - a.s);
  const seen = new Map();
  for (const { i, s } of scored.slice(0, depth)) {
    for (const id of set.corpusIdsOf.get(set.chunks[i].doc) ?? []) {
      if (!seen.has(id)) seen.set(id, { doc: id, score: s, chunk: i });
    }
  }
  return [...seen.values()];
}

const minmax = (list) => {
  const s = list.map((x) => x.score);
  const max = Math.max(...s);
  const min = Math.min(...s);
  return new Map(list.map((x) => [x.doc, max === min ? 1 : (x.score - min) / (max - min)]));
};
const standout = (list) => {
  if (list.length < 2) return 0;
  const s = list.map((x) => x.score);
  const mean = s.reduce((a, b) => a + b, 0) / s.length;
  const sd = Math.sqrt(s.reduce((a, b) => a + (b - mean) ** 2, 0) / s.length);
  return sd ? Math.max(0, (s[0] - mean) / sd) : 0;
};
/** query-service's adaptive rule: α = p·z_sem / (p·z_sem + (1 − p)·z_lex), convex min-max. */
function adaptive(sem, lex, prior = 0.6) {
  const cs = prior * standout(sem);
  const cl = (1 - prior) * standout(lex);
  const a = cs + cl > 0 ? cs / (cs + cl) : prior;
  const ms = minmax(sem);
  const ml = minmax(lex);
  return [...new Set([...ms.keys(), ...ml.keys()])]
    .map((d) => ({ doc: d, score: a * (ms.get(d) ?? 0) + (1 - a) * (ml.get(d) ?? 0) }))
    .sort((x, y) => y.score - x.score);
}

/** Rocchio: q + β·mean of the feedback documents' best chunk vectors. */
function rocchio(set, qv, feedbackDocs, firstSemantic, beta) {
  const byDoc = new Map(firstSemantic.map((x) => [x.doc, x.chunk]));
  const q = normalize(qv);
  const vectors = feedbackDocs
    .map((d) => byDoc.get(d))
    .filter((i) => i !== undefined)
    .map((i) => set.chunks[i].v);
  if (vectors.length === 0) return q;
  const mean = q.map((_, d) => vectors.reduce((s, v) => s + v[d], 0) / vectors.length);
  return q.map((x, d) => x + beta * mean[d]);
}

const K1 = 0.9;
const B = 0.4;
let lexicalDb;
/** @kb/lexical-index's BM25 over a space's postings, with a weight per term; document level. */
async function weightedBm25(set, weights, depth = 100) {
  const lexemes = [...weights.keys()];
  const { rows } = await lexicalDb.query(
    `WITH terms AS (SELECT * FROM unnest($2::text[], $3::float8[]) AS t(lexeme, w)),
          stats AS MATERIALIZED (SELECT count(*)::float8 AS n, greatest(avg(doc_len), 1)::float8 AS avgdl
                      FROM search_index.chunks WHERE tenant_id = $1),
          matched AS MATERIALIZED (SELECT p.* FROM search_index.postings p
                                    WHERE p.tenant_id = $1 AND p.lexeme = ANY($2::text[])),
          df AS MATERIALIZED (SELECT lexeme, count(*)::float8 AS df FROM matched GROUP BY lexeme)
     SELECT p.document_id, sum(t.w * ln(1 + (s.n - df.df + 0.5) / (df.df + 0.5))
                 * (p.tf * ${K1 + 1}) / (p.tf + ${K1} * (1 - ${B} + ${B} * p.doc_len / s.avgdl))) AS score
       FROM matched p JOIN df USING (lexeme) JOIN terms t USING (lexeme) CROSS JOIN stats s
      GROUP BY p.document_id, p.document_version, p.chunk_index
      ORDER BY score DESC, p.document_id LIMIT $4`,
    [set.space, lexemes, lexemes.map((l) => weights.get(l)), depth],
  );
  const seen = new Map();
  for (const row of rows) {
    for (const id of set.corpusIdsOf.get(row.document_id) ?? []) {
      if (!seen.has(id)) seen.set(id, { doc: id, score: Number(row.score) });
    }
  }
  return [...seen.values()];
}

/** The query's lexemes as the lexical index reads them (english stemming, stop words out). */
async function queryLexemes(text) {
  const { rows } = await lexicalDb.query(
    `SELECT coalesce(array_agg(DISTINCT lexeme), '{}') AS l FROM unnest(to_tsvector('english', $1))`,
    [parseLexicalQuery(text).scoringText],
  );
  return rows[0].l;
}

/**
 * RM3: P(w|Q') = λ·P(w|Q) + (1 − λ)·P(w|R), R the feedback documents weighted by their
 * sum-normalised first-pass scores, P(w|d) = tf / length of the document; the m most likely
 * feedback terms are kept.
 */
async function rm3Weights(set, lexemes, feedback, m, lambda) {
  const documents = feedback.map((x) => set.documentOf.get(x.doc)).filter(Boolean);
  const weights = new Map(lexemes.map((l) => [l, lambda / lexemes.length]));
  if (documents.length === 0) return weights;
  const { rows } = await lexicalDb.query(
    `SELECT document_id, lexeme, sum(tf)::float8 AS tf FROM search_index.postings
      WHERE tenant_id = $1 AND document_id = ANY($2::text[]) GROUP BY 1, 2`,
    [set.space, documents],
  );
  const lengths = new Map();
  for (const r of rows) lengths.set(r.document_id, (lengths.get(r.document_id) ?? 0) + r.tf);
  const min = Math.min(...feedback.map((x) => x.score));
  const raw = feedback.map((x) => x.score - min + 1e-6);
  const total = raw.reduce((a, b) => a + b, 0);
  const share = new Map(feedback.map((x, i) => [set.documentOf.get(x.doc), raw[i] / total]));
  const model = new Map();
  for (const r of rows) {
    const p = (share.get(r.document_id) ?? 0) * (r.tf / lengths.get(r.document_id));
    model.set(r.lexeme, (model.get(r.lexeme) ?? 0) + p);
  }
  const top = [...model].sort((a, b) => b[1] - a[1]).slice(0, m);
  const mass = top.reduce((s, [, p]) => s + p, 0) || 1;
  for (const [lexeme, p] of top) {
    weights.set(lexeme, (weights.get(lexeme) ?? 0) + ((1 - lambda) * p) / mass);
  }
  return weights;
}

function rm3Rules() {
  const list = [
    {
      name: 'lexical (weighted SQL, all weights 1)',
      run: async (c, set) => weightedBm25(set, new Map(c.lexemes.map((l) => [l, 1]))),
    },
  ];
  // --rm3-grid source:k:m:λ[:prior],… (default: lexical and fused feedback, k 3 and 10, m 10,
  // λ 0.5 and 0.7; the adaptive rule's prior 0.6 for both fusions unless given)
  const grid = values('rm3-grid')[0]
    ? values('rm3-grid')[0]
        .split(',')
        .map((g) => g.split(':'))
    : ['lexical', 'fused'].flatMap((source) =>
        [3, 10].flatMap((k) => [0.5, 0.7].map((lambda) => [source, k, 10, lambda])),
      );
  for (const [source, kText, mText, lambdaText, priorText] of grid) {
    {
      {
        const k = Number(kText);
        const m = Number(mText);
        const lambda = Number(lambdaText);
        const prior = Number(priorText ?? 0.6);
        const second = async (c, set) => {
          const first = source === 'lexical' ? c.lex : adaptive(c.sem, c.lex, prior);
          return weightedBm25(set, await rm3Weights(set, c.lexemes, first.slice(0, k), m, lambda));
        };
        list.push({
          name: `rm3-${source}-k${k}-m${m}-l${lambda}-adaptive-p${prior}`,
          run: async (c, set) => adaptive(c.sem, await second(c, set), prior),
        });
        const from = source === 'fused' ? `-from-p${prior}` : '';
        list.push({
          name: `rm3-${source}-k${k}-m${m}-l${lambda}${from}-lexical-only`,
          run: second,
        });
      }
    }
  }
  // --combo-grid k:m:λ:prior:kr:β,… RM3 on the lexical side and Rocchio on the semantic side (the
  // query vector moved β toward the mean of the first fusion's top kr; β 0: the first semantic
  // list), fused again with the adaptive rule at that prior.
  for (const [kText, mText, lambdaText, priorText, krText, betaText] of (
    values('combo-grid')[0] ?? ''
  )
    .split(',')
    .filter(Boolean)
    .map((g) => g.split(':'))) {
    const [k, m, lambda, prior, kr, beta] = [
      kText,
      mText,
      lambdaText,
      priorText,
      krText,
      betaText,
    ].map(Number);
    list.push({
      name: `combo-rm3-k${k}-m${m}-l${lambda}-p${prior}-rocchio-k${kr}-b${beta}`,
      run: async (c, set) => {
        const first = adaptive(c.sem, c.lex, prior);
        const lexKey = `${k}:${m}:${lambda}:${prior}`;
        c.memoRm3 ??= new Map();
        if (!c.memoRm3.has(lexKey)) {
          c.memoRm3.set(
            lexKey,
            await weightedBm25(set, await rm3Weights(set, c.lexemes, first.slice(0, k), m, lambda)),
          );
        }
        const lex2 = c.memoRm3.get(lexKey);
        const sem2 =
          beta === 0
            ? c.sem
            : c.second(
                rocchio(
                  set,
                  c.qv,
                  first.slice(0, kr).map((x) => x.doc),
                  c.sem,
                  beta,
                ),
              );
        return adaptive(sem2, lex2, prior);
      },
    });
  }
  return list;
}

function rules() {
  const list = [
    { name: 'semantic', run: (c) => c.sem },
    { name: 'lexical', run: (c) => c.lex },
    { name: 'adaptive-p0.6 (default)', run: (c) => c.fused },
  ];
  for (const source of ['semantic', 'fused']) {
    for (const k of [3, 5, 10]) {
      for (const beta of [0.25, 0.5, 1, 2]) {
        for (const prior of [0.6, 0.7]) {
          list.push({
            name: `rocchio-${source}-k${k}-b${beta}-adaptive-p${prior}`,
            run: (c, set) => {
              const first = source === 'semantic' ? c.sem : c.fused;
              const fb = first.slice(0, k).map((x) => x.doc);
              const sem2 = c.second(rocchio(set, c.qv, fb, c.sem, beta));
              return adaptive(sem2, c.lex, prior);
            },
          });
        }
        list.push({
          name: `rocchio-${source}-k${k}-b${beta}-semantic-only`,
          run: (c, set) => {
            const first = source === 'semantic' ? c.sem : c.fused;
            const fb = first.slice(0, k).map((x) => x.doc);
            return c.second(rocchio(set, c.qv, fb, c.sem, beta));
          },
        });
      }
    }
  }
  return list;
}

async function main() {
  const providers = new Map();
  const sets = [];
  for (const spec of values('set')) sets.push(await loadSet(spec, providers));
  const bm25 = new Map(values('bm25').map((s) => [s.split('=')[0], Number(s.split('=')[1])]));
  const withRm3 = argv.includes('--rm3');
  const all = [
    ...(argv.includes('--no-rocchio') ? rules().slice(0, 3) : rules()),
    ...(withRm3 ? rm3Rules() : []),
  ];
  if (withRm3) {
    lexicalDb = new Client({ connectionString: databaseUrl });
    await lexicalDb.connect();
  }
  const per = new Map(all.map((r) => [r.name, {}]));
  for (const set of sets) {
    const sums = new Map(all.map((r) => [r.name, 0]));
    const memo = new Map();
    for (const query of set.queries) {
      const judged = set.qrels.get(query._id);
      if (!judged) continue;
      const qv = set.qvec.get(query._id);
      const sem = semanticSearch(set, qv);
      const lex = set.lexical.get(query._id) ?? [];
      const context = {
        qv,
        lexemes: withRm3 ? await queryLexemes(query.text) : [],
        sem,
        lex,
        fused: adaptive(sem, lex),
        second: (v) => {
          const key = v.join(',');
          if (!memo.has(key)) memo.set(key, semanticSearch(set, v));
          return memo.get(key);
        },
      };
      for (const rule of all) {
        const ranking = (await rule.run(context, set)).map((x) => x.doc);
        sums.set(rule.name, sums.get(rule.name) + ndcgAt(10, ranking, judged));
      }
      memo.clear();
    }
    const n = set.queries.filter((q) => set.qrels.has(q._id)).length;
    for (const rule of all)
      per.get(rule.name)[set.name] = Math.round((sums.get(rule.name) / n) * 1e4) / 1e4;
  }
  const best = Object.fromEntries(
    sets.map((s) => [s.name, Math.max(per.get('semantic')[s.name], per.get('lexical')[s.name])]),
  );
  const results = all.map((r) => {
    const scores = per.get(r.name);
    const worst = Math.min(...sets.map((s) => scores[s.name] / best[s.name] - 1));
    const overBm25 = Object.fromEntries(
      sets
        .filter((s) => bm25.has(s.name))
        .map((s) => [s.name, Math.round((scores[s.name] / bm25.get(s.name) - 1) * 1e3) / 1e3]),
    );
    return {
      rule: r.name,
      worst: Math.round(worst * 1e4) / 1e4,
      ...scores,
      ...(bm25.size ? { over_bm25: overBm25 } : {}),
    };
  });
  for (const r of results.sort((a, b) => b.worst - a.worst)) {
    process.stdout.write(`${JSON.stringify(r)}\n`);
  }
  for (const p of providers.values()) await p.close?.();
  await lexicalDb?.end();
}

main().catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exit(1);
});
