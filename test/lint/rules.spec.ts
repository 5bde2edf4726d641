import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// The checker is a plain Node script (it runs before anything is built).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { staleLinks } = require('../../scripts/check-doc-links.js') as {
  staleLinks(root: string): string[];
};

const root = join(__dirname, '../..');

/** Each text linted at its (virtual) path with the repository's config: path → messages. */
function lint(texts: Record<string, string>): Record<string, string[]> {
  const out = execFileSync('node', [join(__dirname, 'lint-texts.mjs')], {
    cwd: root,
    input: JSON.stringify(texts),
    encoding: 'utf8',
  });
  return JSON.parse(out) as Record<string, string[]>;
}

const lines = (n: number) =>
  Array.from({ length: n }, (_, i) => `export const v${i} = ${i};`).join('\n') + '\n';

describe('the layout rules, as lint checks (ADR 13)', () => {
  let messages: Record<string, string[]>;

  beforeAll(() => {
    // @nx/enforce-module-boundaries reads the cached project graph, as `npm run lint` makes it.
    execFileSync('node', [require.resolve('nx/bin/nx.js'), 'show', 'projects'], {
      cwd: root,
      stdio: 'ignore',
    });
    messages = lint({
      'apps/query-service/src/probe-350.ts': lines(350),
      'apps/query-service/src/probe-351.ts': lines(351),
      'libs/kafka/src/probe-351.ts': lines(351),
      'libs/contracts/src/generated/probe-351.ts': lines(351),
      'apps/query-service/src/probe.spec.ts': lines(351),
      'apps/query-service/src/probe-relative.ts':
        "import { x } from '../../document-service/src/main';\n\nexport const y = x;\n",
      'apps/query-service/src/probe-scoped.ts':
        "import { x } from '@kb/document-service';\n\nexport const y = x;\n",
      'libs/errors/src/probe-lib.ts': "import { x } from '@kb/mcp';\n\nexport const y = x;\n",
      'libs/errors/src/probe-package.ts':
        "import { status } from '@grpc/grpc-js';\n\nexport const y = status;\n",
      'apps/query-service/src/search/probe.service.ts':
        "import type { Kafka } from 'kafkajs';\n\nexport type K = Kafka;\n",
      'apps/query-service/src/search/probe.consumer.ts':
        "import type { Kafka } from 'kafkajs';\n\nexport type K = Kafka;\n",
    });
  }, 60_000);

  it('fails a source file of 351 lines, in an app or a library, and passes one of 350', () => {
    expect(messages['apps/query-service/src/probe-351.ts']).toEqual([
      expect.stringMatching(/^max-lines: .*\(351\)/),
    ]);
    expect(messages['libs/kafka/src/probe-351.ts']).toEqual([expect.stringMatching(/^max-lines/)]);
    expect(messages['apps/query-service/src/probe-350.ts']).toEqual([]);
  });

  it('leaves generated code and tests to their length', () => {
    expect(messages['libs/contracts/src/generated/probe-351.ts']).toEqual([]);
    expect(messages['apps/query-service/src/probe.spec.ts']).toEqual([]);
  });

  it('fails an app importing another app, by package name or by relative path', () => {
    expect(messages['apps/query-service/src/probe-scoped.ts']).toEqual([
      expect.stringMatching(/^@nx\/enforce-module-boundaries: .*type:app/),
    ]);
    expect(messages['apps/query-service/src/probe-relative.ts']).toEqual([
      expect.stringMatching(/^@nx\/enforce-module-boundaries: .*relative/),
    ]);
  });

  it('fails domain code importing a transport library or package', () => {
    expect(messages['libs/errors/src/probe-lib.ts']).toEqual([
      expect.stringMatching(/^@nx\/enforce-module-boundaries: .*layer:domain/),
    ]);
    expect(messages['libs/errors/src/probe-package.ts']).toEqual([
      expect.stringMatching(/^no-restricted-imports: '@grpc\/grpc-js'/),
    ]);
  });

  it("fails a service's domain code importing a transport, and lets its adapters", () => {
    expect(messages['apps/query-service/src/search/probe.service.ts']).toEqual([
      expect.stringMatching(/^no-restricted-imports: 'kafkajs'/),
    ]);
    expect(messages['apps/query-service/src/search/probe.consumer.ts']).toEqual([]);
  });
});

describe('check-doc-links', () => {
  let dir: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'doc-links-'));
    mkdirSync(join(dir, 'docs/adr'), { recursive: true });
    mkdirSync(join(dir, 'apps/a-service/src'), { recursive: true });
    mkdirSync(join(dir, 'apps/a-service/test'), { recursive: true });
    writeFileSync(join(dir, 'apps/a-service/src/main.ts'), '');
    writeFileSync(join(dir, 'apps/a-service/test/a.int-spec.ts'), '');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('passes links and backticked paths that exist', () => {
    writeFileSync(
      join(dir, 'docs/adr/0001-x.md'),
      [
        'See [main](../../apps/a-service/src/main.ts#L3) and `apps/a-service/src/main.ts:12`,',
        'any `apps/<svc>/src/*.ts`, [the web](https://example.org/x) and [below](#below).',
        '```',
        'apps/nowhere.ts [x](nowhere.md)',
        '```',
      ].join('\n'),
    );
    writeFileSync(join(dir, 'apps/a-service/README.md'), 'Tested by `test/a.int-spec.ts`.\n');
    expect(staleLinks(dir)).toEqual([]);
  });

  it('fails each stale link and backticked path, by file and line', () => {
    writeFileSync(
      join(dir, 'docs/adr/0001-x.md'),
      'Intro.\nSee [gone](../../apps/a-service/src/gone.ts) and `libs/gone/src/index.ts`.\n',
    );
    writeFileSync(join(dir, 'README.md'), 'Read [the ADR](docs/adr/0002-missing.md).\n');
    expect(staleLinks(dir)).toEqual([
      'README.md:1: docs/adr/0002-missing.md',
      'docs/adr/0001-x.md:2: ../../apps/a-service/src/gone.ts',
      'docs/adr/0001-x.md:2: libs/gone/src/index.ts',
    ]);
  });
});
