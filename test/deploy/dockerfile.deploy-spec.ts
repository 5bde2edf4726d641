/**
 * No Docker engine runs here, so the image recipes are checked by parsing them with a real
 * Dockerfile parser (dockerfile-ast, the one VS Code's Docker extension uses) and asserting the
 * rules that matter for a production image.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import {
  type Arg,
  type Copy,
  type Dockerfile,
  DockerfileParser,
  type Env,
  type From,
  type Instruction,
} from 'dockerfile-ast';

const ROOT = join(__dirname, '..', '..');
const parse = (file: string): Dockerfile =>
  DockerfileParser.parse(readFileSync(join(ROOT, file), 'utf8'));

interface Stage {
  from: From;
  name: string | null;
  instructions: Instruction[];
}
/** Instructions grouped by the FROM they follow. */
const stagesOf = (dockerfile: Dockerfile): Stage[] => {
  const stages: Stage[] = [];
  for (const instruction of dockerfile.getInstructions()) {
    if (instruction.getKeyword() === 'FROM') {
      const from = instruction as From;
      stages.push({ from, name: from.getBuildStage(), instructions: [] });
    } else {
      stages[stages.length - 1]?.instructions.push(instruction);
    }
  }
  return stages;
};
const byKeyword = <T extends Instruction>(stage: Stage, keyword: string): T[] =>
  stage.instructions.filter((i) => i.getKeyword() === keyword) as T[];

describe.each(['deploy/Dockerfile', 'deploy/model.Dockerfile'])('%s', (file) => {
  const dockerfile = parse(file);
  const stages = stagesOf(dockerfile);
  const final = stages[stages.length - 1]!;

  it('pins every base image to an exact version tag', () => {
    expect(stages.length).toBeGreaterThanOrEqual(1);
    for (const { from } of stages) {
      const image = from.getImage() ?? '';
      // A stage name reused as a base is fine; an external image must be name:X.Y.Z[-variant].
      if (stages.some((s) => s.name === image)) continue;
      expect(image).not.toMatch(/\$/);
      expect({ image, tag: from.getImageTag() }).toEqual({
        image,
        tag: expect.stringMatching(/^\d+\.\d+\.\d+(-[a-z0-9.-]+)?$/),
      });
    }
  });

  it('runs the final stage as a numeric, non-root user', () => {
    const users = byKeyword(final, 'USER');
    expect(users.length).toBeGreaterThanOrEqual(1);
    const user = users[users.length - 1]!.getArgumentsContent() ?? '';
    expect(user).toMatch(/^\d+(:\d+)?$/);
    expect(Number(user.split(':')[0])).toBeGreaterThan(0);
  });

  it('bakes no secrets into ENV or ARG', () => {
    const secretLike = /SECRET|PASSWORD|PASSWD|TOKEN|KEY|CREDENTIAL/i;
    for (const instruction of dockerfile.getInstructions()) {
      const keyword = instruction.getKeyword();
      const properties =
        keyword === 'ENV'
          ? (instruction as Env).getProperties()
          : keyword === 'ARG'
            ? [(instruction as Arg).getProperty()].filter((p) => p !== null)
            : [];
      for (const property of properties) {
        if (!secretLike.test(property.getName())) continue;
        // A name like that may be declared (ARG NPM_TOKEN) but never given a value here.
        expect({ name: property.getName(), value: property.getValue() }).toEqual({
          name: property.getName(),
          value: null,
        });
      }
    }
  });
});

describe('deploy/Dockerfile', () => {
  const dockerfile = parse('deploy/Dockerfile');
  const stages = stagesOf(dockerfile);
  const final = stages[stages.length - 1]!;
  const runs = (stage: Stage) =>
    byKeyword(stage, 'RUN')
      .map((r) => r.getArgumentsContent() ?? '')
      .join('\n');

  it('builds with a build stage and runs from a slim final stage on the same pinned base', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    expect(stages[0]!.from.getImage()).toMatch(/^node:\d+\.\d+\.\d+-bookworm-slim$/);
    expect(final.from.getImage()).toBe(stages[0]!.from.getImage());
    const build = runs(stages[0]!);
    expect(build).toMatch(/npm ci\b/);
    expect(build).toMatch(/tsc -b "?apps\/\$\{?SERVICE\}?/);
    expect(build).toMatch(/npm prune --omit=dev/);
    // The final stage installs nothing: only what the build stage pruned to production.
    expect(runs(final)).not.toMatch(/npm (ci|install)/);
  });

  it('runs on Node 24, the exact version pinned in .nvmrc (docs/adr/0035)', () => {
    const pinned = readFileSync(join(ROOT, '.nvmrc'), 'utf8').trim();
    expect(pinned).toMatch(/^24\.\d+\.\d+$/);
    for (const stage of stages) {
      expect(stage.from.getImage()).toBe(`node:${pinned}-bookworm-slim`);
    }
  });

  it('runs the service in production mode on all interfaces', () => {
    const env = new Map(
      byKeyword<Env>(final, 'ENV')
        .flatMap((e) => e.getProperties())
        .map((p) => [p.getName(), p.getValue()]),
    );
    expect(env.get('NODE_ENV')).toBe('production');
    expect(env.get('HOST')).toBe('0.0.0.0');
    expect(byKeyword(final, 'EXPOSE').length).toBeGreaterThan(0);
    const cmd = byKeyword(final, 'CMD');
    expect(cmd).toHaveLength(1);
    expect(cmd[0]!.getArgumentsContent()).toMatch(/node apps\/\$\{?SERVICE\}?\/dist\/main\.js/);
  });

  it('copies only what exists: context paths in the repo, stage paths made in that stage', () => {
    const names = new Set<string>();
    for (const stage of stages) {
      const workdir = byKeyword(stage, 'WORKDIR').map((w) => w.getArgumentsContent())[0] ?? '/';
      // Top-level entries of the stage's WORKDIR that its COPYs and RUNs create.
      const made = new Set<string>();
      if (/npm (ci|install)\b/.test(runs(stage))) made.add('node_modules');
      for (const copy of byKeyword<Copy>(stage, 'COPY')) {
        const from = copy.getFromFlag()?.getValue();
        const args = copy.getArguments().map((a) => a.getValue());
        const sources = args.slice(0, -1);
        const destination = args[args.length - 1]!;
        expect(sources.length).toBeGreaterThan(0);
        if (from) {
          // --from names an earlier stage, and each path is something that stage made.
          expect({ from, known: names.has(from) }).toEqual({ from, known: true });
          const source = stages.find((s) => s.name === from)!;
          const sourceWorkdir = byKeyword(source, 'WORKDIR').map((w) => w.getArgumentsContent())[0];
          const sourceMade = new Set<string>(
            /npm (ci|install)\b/.test(runs(source)) ? ['node_modules'] : [],
          );
          for (const c of byKeyword<Copy>(source, 'COPY')) {
            const a = c.getArguments().map((x) => x.getValue());
            const dest = a[a.length - 1]!;
            if (dest === './' || dest === '.')
              a.slice(0, -1).forEach((s) => sourceMade.add(s.replace(/\/$/, '')));
            else sourceMade.add(dest.replace(/^\.\//, '').replace(/\/$/, '').split('/')[0]!);
          }
          for (const path of sources) {
            expect(path.startsWith(`${sourceWorkdir}/`)).toBe(true);
            const top = path.slice(`${sourceWorkdir}/`.length).split('/')[0]!;
            expect({ path, made: sourceMade.has(top) }).toEqual({ path, made: true });
          }
        } else {
          for (const path of sources) {
            expect({ path, exists: existsSync(join(ROOT, path)) }).toEqual({ path, exists: true });
          }
        }
        made.add(destination.replace(/^\.\//, '').split('/')[0]!);
      }
      expect(workdir.startsWith('/')).toBe(true);
      if (stage.name) names.add(stage.name);
    }
  });

  it('keeps local state out of the build context (.dockerignore)', () => {
    const ignored = readFileSync(join(ROOT, '.dockerignore'), 'utf8').split('\n');
    expect(ignored).toEqual(
      expect.arrayContaining([
        'node_modules',
        '**/dist',
        '.git',
        '.nx',
        'coverage',
        '*.log',
        '.env',
      ]),
    );
  });
});
