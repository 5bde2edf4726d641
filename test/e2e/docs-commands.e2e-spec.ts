/**
 * Every command block of the README and of the guides in docs/ (```bash, ```sh, ```console) runs
 * against the seven services, so a wrong command in the docs fails CI.
 *
 * - A file's blocks run in order in one `bash -euo pipefail` from the repository root, as a reader
 *   pastes them: what one block exports (KB_TOKEN, the `kb` function) the next one uses. Each
 *   must exit 0. README.md runs first (its first search indexes a document the guides read).
 * - The docs write the local defaults: ports 3001–3007, gRPC 50051/50061 and the example tenant
 *   `acme`. The test points them at this suite's ports and tenant (and sets KB_DOCUMENTS_URL,
 *   KB_QUERY_URL, KB_WEBHOOKS_URL and KB_GRPC_ADDRESS, which the `kb` CLI reads).
 * - In a ```console block, lines starting with `$ ` are commands; the rest is output.
 * - A block right after `<!-- not run: reason -->` is checked, not run: each command in it must
 *   be one this test can check without running it (`npm` scripts exist, files exist, `helm`
 *   renders the chart, `kubectl` only creates secrets). Any other command fails the test. The
 *   number of such blocks is pinned below, so a new one is a deliberate change.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { useSuite } from '../support/suite';

jest.setTimeout(600_000);

const ROOT = join(__dirname, '..', '..');
/** Blocks marked `<!-- not run: … -->`: npm start/test, the Kubernetes install, the benches. */
const NOT_RUN_BLOCKS = 4;

interface Block {
  file: string;
  line: number;
  language: string;
  commands: string;
  notRun?: string;
}

/** Fences the test reads as commands, and those it knows to hold none. */
const SHELL = ['bash', 'sh', 'console'];
const NOT_SHELL = ['', 'text', 'json', 'yaml', 'mermaid', 'ts', 'typescript'];

const DOC_FILES = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`),
];

/** The shell blocks of one markdown file, with the `not run` reason of those marked so. */
function blocksOf(file: string): Block[] {
  const lines = readFileSync(join(ROOT, file), 'utf8').split('\n');
  const blocks: Block[] = [];
  let lastMarker: { reason: string; line: number } | undefined;
  for (let i = 0; i < lines.length; i++) {
    const marker = /^<!-- not run: (.+) -->$/.exec(lines[i]!.trim());
    if (marker) lastMarker = { reason: marker[1]!, line: i };
    const fence = /^```(\S*)/.exec(lines[i]!);
    if (!fence) continue;
    const language = fence[1]!;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !lines[i]!.startsWith('```'); i++) body.push(lines[i]!);
    if (!SHELL.includes(language)) {
      blocks.push({ file, line: start + 1, language, commands: '' });
      continue;
    }
    const commands =
      language === 'console' ? body.filter((l) => l.startsWith('$ ')).map((l) => l.slice(2)) : body;
    const marked =
      lastMarker && lines.slice(lastMarker.line + 1, start).every((l) => l.trim() === '');
    blocks.push({
      file,
      line: start + 1,
      language,
      commands: commands.join('\n'),
      ...(marked ? { notRun: lastMarker!.reason } : {}),
    });
  }
  return blocks;
}

/** One command per logical line: comments dropped, continuations joined, `&&` split. */
function commandsOf(block: Block): string[][] {
  return block.commands
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.replace(/(^|\s)#.*$/, '').trim())
    .filter(Boolean)
    .flatMap((line) => line.split('&&'))
    .map((command) => command.trim().split(/\s+/));
}

/** Why a command of a `not run` block is wrong, or undefined when it checks out. */
function checkNotRun(words: string[], copies: Map<string, string>): string | undefined {
  const scripts = (
    JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    }
  ).scripts;
  const exists = (path: string) => existsSync(join(ROOT, path));
  const [command, sub, ...rest] = words;
  if (command === 'npm') {
    if (sub === 'ci') return exists('package-lock.json') ? undefined : 'no package-lock.json';
    const script = sub === 'run' ? rest[0] : sub;
    return script && scripts[script] ? undefined : `no npm script "${script}"`;
  }
  if (command === 'node') return sub && exists(sub) ? undefined : `no file ${sub}`;
  if (command === 'cp') {
    copies.set(rest[0]!, sub!);
    return exists(sub!) ? undefined : `no file ${sub}`;
  }
  if (command === 'kubectl') {
    return sub === 'create' && rest[0] === 'secret' ? undefined : 'kubectl beyond secrets';
  }
  if (command === 'helm' && sub === 'rollback') return undefined;
  if (command === 'helm' && (sub === 'install' || sub === 'upgrade')) {
    const chart = rest[1]!;
    if (!exists(chart)) return `no chart ${chart}`;
    const values = rest
      .flatMap((word, i) => (word === '-f' ? [rest[i + 1]!] : []))
      .map((file) => copies.get(file) ?? file);
    const missing = values.find((file) => !exists(file));
    if (missing) return `no values file ${missing}`;
    const helm = join(process.env['KB_HOME'] ?? '', 'bin', 'helm');
    const rendered = spawnSync(
      helm,
      ['template', 'kb', chart, ...values.flatMap((file) => ['-f', file])],
      { cwd: ROOT, encoding: 'utf8' },
    );
    return rendered.status === 0 ? undefined : `helm template failed: ${rendered.stderr}`;
  }
  return `a command the docs test cannot check: ${words.join(' ')}`;
}

const fenced = DOC_FILES.flatMap(blocksOf);
const blocks = fenced.filter((block) => SHELL.includes(block.language));

describe('docs: every command block', () => {
  const suite = useSuite('docs-commands', 5800);

  it('finds the blocks, and pins those it does not run', () => {
    // A fence it does not know (e.g. a four-backtick fence around a shell block) would hide commands.
    const unknown = fenced.filter((block) => ![...SHELL, ...NOT_SHELL].includes(block.language));
    expect(unknown.map((block) => `${block.file}:${block.line} ${block.language}`)).toEqual([]);
    expect(blocks.filter((block) => !block.notRun).length).toBeGreaterThan(0);
    expect(blocks.filter((block) => block.notRun).map((b) => `${b.file}:${b.line}`)).toHaveLength(
      NOT_RUN_BLOCKS,
    );
  });

  it.each(
    blocks.filter((block) => block.notRun).map((block) => [`${block.file}:${block.line}`, block]),
  )('checks the commands of %s it does not run', (_where, block) => {
    const copies = new Map<string, string>();
    const problems = commandsOf(block as Block)
      .map((words) => checkNotRun(words, copies))
      .filter(Boolean);
    expect(problems).toEqual([]);
  });

  it.each(DOC_FILES.filter((file) => blocks.some((b) => b.file === file && !b.notRun)))(
    'runs the blocks of %s',
    (file) => {
      const ports = suite.ports;
      const http = (service: string) => String(ports[service]!.port);
      const portOf: Record<string, string> = {
        '3001': http('document-service'),
        '3002': http('parser-service'),
        '3003': http('embedding-service'),
        '3004': http('indexing-service'),
        '3005': http('query-service'),
        '3006': http('acl-service'),
        '3007': http('webhook-service'),
        '50051': String(ports['query-service']!.grpcPort),
        '50061': String(ports['acl-service']!.grpcPort),
      };
      const script = blocks
        .filter((block) => block.file === file && !block.notRun)
        .map(
          (block) =>
            `echo "::block ${block.file}:${block.line}" >&2\n` +
            block.commands
              .replace(/127\.0\.0\.1:(300[1-7]|50051|50061)\b/g, (_m, port: string) => {
                return `127.0.0.1:${portOf[port]}`;
              })
              .replace(/--tenant acme\b/g, `--tenant ${suite.tenant}`),
        )
        .join('\n');
      const run = spawnSync('bash', ['-euo', 'pipefail', '-c', script], {
        cwd: ROOT,
        encoding: 'utf8',
        timeout: 300_000,
        env: {
          ...process.env,
          KB_DOCUMENTS_URL: `http://127.0.0.1:${portOf['3001']}`,
          KB_QUERY_URL: `http://127.0.0.1:${portOf['3005']}`,
          KB_WEBHOOKS_URL: `http://127.0.0.1:${portOf['3007']}`,
          KB_GRPC_ADDRESS: `127.0.0.1:${portOf['50051']}`,
        },
      });
      const failedBlock = [...run.stderr.matchAll(/::block (\S+)/g)].pop()?.[1];
      expect({
        status: run.status,
        ...(run.status === 0 ? {} : { failedBlock, stderr: run.stderr.slice(-2_000) }),
      }).toEqual({ status: 0 });
    },
  );
});
