/**
 * Request bodies are read only after the caller is authenticated (security review N3): a flood of
 * large unauthenticated bodies is refused without document-service buffering or parsing them, and
 * each route reads no more than its own limit.
 */
import { readFileSync } from 'node:fs';

import { useSuite } from '../support/suite';

jest.setTimeout(300_000);

const MB = 1024 * 1024;

/** The service's resident set, from the kernel. */
function rssBytes(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'));
  if (!line) throw new Error(`no VmRSS for ${pid}`);
  return Number(/(\d+)\s*kB/.exec(line)![1]) * 1024;
}

describe('request bodies (document-service)', () => {
  const suite = useSuite('bodies', 7400);

  it('answers 401 to 20 parallel unauthenticated 15 MB JSON bodies, its RSS growing < 50 MB', async () => {
    const pid = suite.pidOf('document-service')!;
    // The review's worst case: 15 MB of empty arrays, about 200 MB of heap once parsed.
    const body = Buffer.from(`[${'[],'.repeat(5 * MB - 1)}[]]`);
    expect(body.length).toBeGreaterThanOrEqual(15 * MB);
    const paths = ['/v1/documents', '/v1/knowledge-bases/default/chunks'];
    const before = rssBytes(pid);
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, rssBytes(pid))), 10);
    try {
      const answers = await Promise.all(
        Array.from({ length: 20 }, async (_, i) => {
          const response = await fetch(`${suite.documentUrl}${paths[i % 2]}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body,
          });
          return { status: response.status, body: (await response.json()) as object };
        }),
      );
      for (const answer of answers) {
        expect(answer).toMatchObject({ status: 401, body: { error: { code: 'unauthenticated' } } });
      }
      peak = Math.max(peak, rssBytes(pid));
    } finally {
      clearInterval(sampler);
    }
    // Buffered, the bodies would be 300 MB. Node 24 frees the socket's discarded read buffers later
    // than Node 20 did (a peak of 60-67 MB instead of 31-33 MB, ADR 35), so the bound is 100 MB.
    expect(peak - before).toBeLessThan(100 * MB);
    // And the service still answers.
    const ready = await fetch(`${suite.documentUrl}/health/ready`);
    expect(ready.status).toBe(200);
  });

  it('answers 413 payload_too_large to an authenticated body over a small-limit route', async () => {
    const response = await fetch(
      `${suite.documentUrl}/v1/documents/00000000-0000-4000-8000-000000000000/acl`,
      {
        method: 'PUT',
        headers: { 'content-type': 'application/json', ...(await suite.auth()) },
        body: JSON.stringify({ users: ['x'.repeat(200 * 1024)] }),
      },
    );
    expect(response.status).toBe(413);
    expect(await response.json()).toEqual({
      error: {
        code: 'payload_too_large',
        message: 'the request body is larger than this route accepts (100kb)',
      },
    });
  });

  it('reads a larger body on the routes that take one, once the caller is authenticated', async () => {
    const headers = { 'content-type': 'application/json', ...(await suite.auth()) };
    // A JSON upload over the 100 kB default (and under the suite's 1 MiB upload limit).
    const text = `Body limits per route. ${'A sentence about tides and harbours. '.repeat(14_000)}`;
    expect(text.length).toBeGreaterThan(500 * 1024);
    const uploaded = await fetch(`${suite.documentUrl}/v1/documents`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ title: 'Large JSON upload', text }),
    });
    expect(uploaded.status).toBe(202);
    // Pre-computed chunks, into a knowledge base a tenant admin opened to them (ADR 33): 300
    // chunks of 384 numbers of unit length, about 2.5 MB of JSON.
    const created = await fetch(`${suite.documentUrl}/v1/knowledge-bases`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ id: 'bulk', name: 'Bulk' }),
    });
    expect(created.status).toBe(201);
    const opened = await fetch(`${suite.documentUrl}/v1/knowledge-bases/bulk`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json', ...(await suite.auth({ roles: ['admin'] })) },
      body: JSON.stringify({ allowPrecomputedVectors: true }),
    });
    expect(opened.status).toBe(200);
    const chunks = Array.from({ length: 300 }, (_, i) => {
      const raw = Array.from({ length: 384 }, (_, j) => Math.sin(i * 384 + j + 1));
      const norm = Math.hypot(...raw);
      return {
        id: `c${i}`,
        text: `chunk ${i} of a large pre-computed document`,
        embedding: raw.map((v) => v / norm),
      };
    });
    const precomputed = JSON.stringify({ title: 'Large chunk batch', chunks });
    expect(precomputed.length).toBeGreaterThan(2 * MB);
    const stored = await fetch(`${suite.documentUrl}/v1/knowledge-bases/bulk/chunks`, {
      method: 'POST',
      headers,
      body: precomputed,
    });
    expect(stored.status).toBe(202);
  });
});
