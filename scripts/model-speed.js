// Passage-embedding speed of each local model on the same texts, in this process (no services):
// what a model alone costs an ingest, apart from parsing, uploads and indexing. Rounds alternate
// the models so a machine whose load changes affects each alike; the median round counts, and
// the best round (the least disturbed) is printed beside it.
// Usage: node scripts/model-speed.js [--dataset <BEIR folder>] [--texts 64] [--rounds 3]
//   [--models all-MiniLM-L6-v2,bge-small-en-v1.5,e5-small-v2]
// Needs `npm run build` (libs/embeddings/dist) and the models (scripts/infra/fetch-model.sh).
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { OnnxEmbeddingProvider } = require('../libs/embeddings/dist');

const option = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? fallback : process.argv[i + 1];
};
const dataset = option('dataset', path.join(__dirname, '..', 'test', 'fixtures', 'cisi'));
const count = Number(option('texts', '64'));
const rounds = Number(option('rounds', '3'));
const models = option('models', 'all-MiniLM-L6-v2,bge-small-en-v1.5,e5-small-v2').split(',');
const modelDir =
  process.env.EMBEDDING_MODEL_DIR ??
  path.join(
    process.env.KB_HOME ?? path.join(require('node:os').homedir(), '.cache', 'kb'),
    'models',
  );
const threads = Number(process.env.EMBEDDING_THREADS ?? 2);

async function main() {
  // Chunk-sized passages: the first `count` corpus entries, title and text, cut at 1,000 characters.
  const texts = fs
    .readFileSync(path.join(dataset, 'corpus.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .slice(0, count)
    .map((l) => JSON.parse(l))
    .map((d) => `${d.title ?? ''}\n${d.text ?? ''}`.slice(0, 1000));
  const providers = [];
  for (const model of models) {
    providers.push({
      model,
      provider: await OnnxEmbeddingProvider.load({ modelDir, model, threads }),
    });
  }
  const times = new Map(models.map((m) => [m, []]));
  for (let round = 0; round < rounds; round++) {
    for (const { model, provider } of providers) {
      const started = performance.now();
      for (let i = 0; i < texts.length; i += 16) await provider.embed(texts.slice(i, i + 16));
      times.get(model).push((performance.now() - started) / 1000);
    }
  }
  for (const model of models) {
    const sorted = [...times.get(model)].sort((a, b) => a - b);
    const median = sorted[Math.floor(sorted.length / 2)];
    process.stdout.write(
      `${JSON.stringify({
        model,
        texts: texts.length,
        threads,
        rounds_s: times.get(model).map((s) => Math.round(s * 10) / 10),
        chunks_per_s: Math.round((texts.length / median) * 10) / 10,
        best_chunks_per_s: Math.round((texts.length / sorted[0]) * 10) / 10,
      })}\n`,
    );
  }
}

main().catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exit(1);
});
