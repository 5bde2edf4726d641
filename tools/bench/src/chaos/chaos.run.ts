import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { localToken } from '@kb/kb-cli/api';

import { launcher, type RunningService } from '../launcher/services.launcher';
import { chaosPorts, faults, selectFaults, sleep } from './faults';
import { checkIndexes, type DocumentState, readIndexRows } from './index-check';

export interface ChaosOptions {
  documents: number;
  basePort: number;
  settleMs: number;
  /** Seconds over which the uploads are spread (default: 35 a fault). */
  spreadS?: number;
  faults: string[];
  dataset: string;
  logDir: string;
  databaseUrl: string;
  vectorDatabaseUrl: string;
}

interface ChaosDocument {
  marker: string;
  title: string;
  text: string;
  id?: string;
}

export interface SearchCounts {
  requests: number;
  ok: number;
  unavailable: number;
  server_errors: number;
  failed_to_connect: number;
  acl_widened: number;
}

/** Sends one upload until the service acknowledges it, as a client honouring 503s would. */
async function upload(
  documentsUrl: string,
  owner: string,
  doc: ChaosDocument,
): Promise<{ id: string; status: number }> {
  for (let attempt = 0; ; attempt++) {
    const form = new FormData();
    form.append('file', new Blob([doc.text], { type: 'text/plain' }), `${doc.marker}.txt`);
    form.append('title', doc.title);
    let response: Response;
    try {
      response = await fetch(`${documentsUrl}/v1/documents`, {
        method: 'POST',
        body: form,
        headers: { authorization: `Bearer ${owner}` },
        signal: AbortSignal.timeout(30_000),
      });
    } catch {
      await sleep(Math.min(5_000, 250 * 2 ** Math.min(attempt, 5)));
      continue;
    }
    if (response.status === 202 || response.status === 200) {
      return { id: ((await response.json()) as { id: string }).id, status: response.status };
    }
    if (response.status < 500 && response.status !== 429) {
      throw new Error(`upload ${doc.marker}: ${response.status} ${await response.text()}`);
    }
    await response.body?.cancel();
    const retryAfter = Number(response.headers.get('retry-after') ?? 1);
    await sleep(Math.min(10, retryAfter) * 1000);
  }
}

/** Searches until `running()` is false: as the owner (never 500) and as an outsider (sees none). */
async function searchAllAlong(
  queryUrl: string,
  tokens: { owner: string; outsider: string },
  docs: ChaosDocument[],
  running: () => boolean,
  counts: SearchCounts,
): Promise<void> {
  while (running()) {
    const asOwner = Math.random() < 0.5;
    const uploaded = docs.filter((d) => d.id);
    const query =
      asOwner && uploaded.length
        ? uploaded[Math.floor(Math.random() * uploaded.length)]!.marker
        : 'classification libraries';
    counts.requests += 1;
    try {
      const response = await fetch(`${queryUrl}/v1/search`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: `Bearer ${asOwner ? tokens.owner : tokens.outsider}`,
        },
        body: JSON.stringify({ query, topK: 10, mode: asOwner ? 'lexical' : 'hybrid' }),
        signal: AbortSignal.timeout(15_000),
      });
      if (response.status === 200) {
        counts.ok += 1;
        const body = (await response.json()) as { hits: unknown[] };
        if (!asOwner && body.hits.length > 0) counts.acl_widened += 1;
      } else {
        await response.body?.cancel();
        if (response.status === 503) counts.unavailable += 1;
        else counts.server_errors += 1;
      }
    } catch {
      counts.failed_to_connect += 1; // the process was being restarted
    }
    await sleep(200);
  }
}

/** Every document of the owner, by id, following the cursor. */
async function documentStates(
  documentsUrl: string,
  owner: string,
): Promise<Map<string, DocumentState>> {
  const states = new Map<string, DocumentState>();
  let cursor: string | null = null;
  do {
    const url = new URL(`${documentsUrl}/v1/documents`);
    url.searchParams.set('limit', '100');
    if (cursor) url.searchParams.set('cursor', cursor);
    const response = await fetch(url, { headers: { authorization: `Bearer ${owner}` } });
    const page = (await response.json()) as { items: DocumentState[]; nextCursor: string | null };
    for (const d of page.items) states.set(d.id, d);
    cursor = page.nextCursor;
  } while (cursor);
  return states;
}

const countBy = (values: Array<string | undefined>): Record<string, number> => {
  const counts: Record<string, number> = {};
  for (const value of values) counts[value ?? 'unknown'] = (counts[value ?? 'unknown'] ?? 0) + 1;
  return counts;
};

/**
 * Ingests `documents` documents (the dataset's abstracts, each with a unique marker) while the
 * faults are injected one after another, searching all along; then waits for the pipeline to
 * settle and checks every document against the indexes. Resolves with `{ chaos: summary }` and
 * whether every promise held. Stops the services it started in every case.
 */
export async function runChaos(
  options: ChaosOptions,
  log: (line: string) => void,
): Promise<{ summary: Record<string, unknown>; broken: number }> {
  const chaosLog = join(options.logDir, 'chaos');
  mkdirSync(chaosLog, { recursive: true });
  const ports = chaosPorts(options.basePort);
  const url = (service: string): string => `http://127.0.0.1:${ports[service]!.port}`;
  const launch = (name: string): RunningService =>
    launcher.startService(name, { ports, logDir: chaosLog });
  const tenant = `chaos-${randomUUID().slice(0, 8)}`;
  const owner = await localToken({ tenant, user: 'owner', roles: ['editor'] });
  const outsider = await localToken({ tenant, user: 'outsider', roles: ['editor'] });
  const lines = readFileSync(join(options.dataset, 'corpus.jsonl'), 'utf8').trim().split('\n');
  const docs: ChaosDocument[] = Array.from({ length: options.documents }, (_, i) => {
    const source = JSON.parse(lines[i % lines.length]!) as { title: string; text: string };
    const marker = `zqchaos${i}x${randomUUID().slice(0, 6)}`;
    return {
      marker,
      title: source.title,
      text: `${source.title}\n\n${source.text}\n\nMarker ${marker}.`,
    };
  });

  const services = new Map<string, RunningService>();
  try {
    for (const s of launcher.SERVICES) services.set(s.name, launch(s.name));
    await launcher.waitReady([...services.values()]);
    const started = Date.now();
    const searches: SearchCounts = {
      requests: 0,
      ok: 0,
      unavailable: 0,
      server_errors: 0,
      failed_to_connect: 0,
      acl_widened: 0,
    };
    let searching = true;
    const searcher = searchAllAlong(
      url('query-service'),
      { owner, outsider },
      docs,
      () => searching,
      searches,
    );

    const schedule = selectFaults(faults(services, launch), options.faults);
    // Uploads are spread over the whole fault schedule, four at a time, so every fault lands in
    // the middle of the ingest.
    const spreadMs = (options.spreadS ?? schedule.length * 35) * 1000;
    let next = 0;
    let duplicatesAnswered = 0;
    const uploader = Promise.all(
      Array.from({ length: 4 }, async () => {
        while (next < docs.length) {
          const index = next++;
          const doc = docs[index]!;
          await sleep(started + (index * spreadMs) / docs.length - Date.now());
          const result = await upload(url('document-service'), owner, doc);
          doc.id = result.id;
          if (result.status === 200) duplicatesAnswered += 1;
        }
      }),
    );

    const injected: Array<{ fault: string; at_s: number; down_s: number; recovery_s: number }> = [];
    for (const fault of schedule) {
      await sleep(5_000);
      const at = Date.now();
      log(fault.name);
      await fault.inject();
      const restored = Date.now();
      await launcher.waitReady([...services.values()], 300_000);
      injected.push({
        fault: fault.name,
        at_s: Math.round((at - started) / 1000),
        down_s: Math.round((restored - at) / 100) / 10,
        recovery_s: Math.round((Date.now() - restored) / 100) / 10,
      });
    }
    await uploader;
    log(`${docs.length} uploads acknowledged; waiting for the pipeline`);

    // Settle: every acknowledged document reaches indexed or failed.
    const settled = (d: ChaosDocument, states: Map<string, DocumentState>): boolean =>
      ['indexed', 'failed'].includes(states.get(d.id!)?.status ?? '');
    const deadline = Date.now() + options.settleMs;
    let statusOf = await documentStates(url('document-service'), owner);
    while (!docs.every((d) => settled(d, statusOf)) && Date.now() <= deadline) {
      await sleep(2_000);
      statusOf = await documentStates(url('document-service'), owner);
    }
    searching = false;
    await searcher;

    const counts = checkIndexes(
      await readIndexRows(tenant, {
        database: options.databaseUrl,
        vectorDatabase: options.vectorDatabaseUrl,
      }),
      statusOf,
    );
    const ids = new Set(docs.map((d) => d.id));
    const failed = docs.filter((d) => statusOf.get(d.id!)?.status === 'failed');
    const summary = {
      documents: docs.length,
      indexed: docs.filter((d) => statusOf.get(d.id!)?.status === 'indexed').length,
      failed: failed.length,
      failure_reasons: countBy(failed.map((d) => statusOf.get(d.id!)?.failure?.reason)),
      lost:
        docs.filter((d) => !statusOf.has(d.id!)).length +
        docs.filter((d) => !settled(d, statusOf)).length,
      duplicated: statusOf.size - ids.size + counts.duplicated,
      mismatched: counts.mismatched,
      orphans: counts.orphans,
      duplicate_uploads_answered: duplicatesAnswered,
      faults: injected,
      searches,
      search_errors: searches.server_errors,
      max_recovery_s: Math.max(0, ...injected.map((f) => f.recovery_s)),
      elapsed_s: Math.round((Date.now() - started) / 1000),
    };
    const broken =
      summary.lost +
      summary.duplicated +
      summary.mismatched +
      summary.orphans +
      summary.failed +
      summary.search_errors +
      searches.acl_widened;
    return { summary, broken };
  } finally {
    // No service may outlive the run: they would hold the ports of the next one.
    await launcher.stopServices([...services.values()], 5_000);
  }
}
