import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { parse } from 'yaml';

import { largeHtmlPage, MEMORY_LIMITS_MB } from './large.bench';

const VALUES = join(__dirname, '..', '..', '..', '..', 'helm', 'knowledge-base', 'values.yaml');

describe('bench large', () => {
  it('holds each service to the memory limit the Helm chart gives it', () => {
    const values = parse(readFileSync(VALUES, 'utf8')) as {
      services: Record<string, { resources: { limits: { memory: string } } }>;
    };
    const mib = (quantity: string): number => {
      const match = /^(\d+)(Mi|Gi)$/.exec(quantity);
      if (!match) throw new Error(`unexpected memory quantity ${quantity}`);
      return Number(match[1]) * (match[2] === 'Gi' ? 1024 : 1);
    };
    expect(MEMORY_LIMITS_MB).toEqual(
      Object.fromEntries(
        Object.entries(values.services).map(([name, s]) => [name, mib(s.resources.limits.memory)]),
      ),
    );
  });

  it('builds a page of the requested size whose prose survives as text', () => {
    const paragraphs = ['Alpha paragraph about indexing.', 'Beta paragraph <with> markup & more.'];
    for (const size of [200_000, 1_000_000]) {
      const page = largeHtmlPage(paragraphs, size, 20_000);
      expect(Math.abs(page.length - size) / size).toBeLessThan(0.02);
      const html = page.toString('utf8');
      expect(html).toContain('<p>Beta paragraph &lt;with&gt; markup &amp; more.</p>');
      expect(html).toContain('src="data:image/jpeg;base64,');
    }
  });
});
