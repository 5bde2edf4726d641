/**
 * No Docker engine runs here, so the image recipe is checked by parsing it with a real Dockerfile
 * parser (dockerfile-ast, the one VS Code's Docker extension uses) and asserting the rules that
 * matter for a production image.
 */
import { DockerfileParser, type Copy } from 'dockerfile-ast';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');
const dockerfile = DockerfileParser.parse(readFileSync(join(ROOT, 'deploy', 'Dockerfile'), 'utf8'));
const froms = dockerfile.getFROMs();

describe('deploy/Dockerfile', () => {
  it('pins every base image to an exact version', () => {
    expect(froms.length).toBeGreaterThanOrEqual(2);
    for (const from of froms) {
      const tag = from.getImageTag() ?? '';
      expect(from.getImageName()).not.toMatch(/\$/);
      expect(tag).toMatch(/^\d+\.\d+\.\d+(-[a-z0-9.-]+)?$/);
    }
  });

  it('runs the final stage as a numeric non-root user', () => {
    const finalStart = froms[froms.length - 1]!.getRange().start.line;
    const users = dockerfile
      .getInstructions()
      .filter((i) => i.getKeyword() === 'USER' && i.getRange().start.line > finalStart);
    expect(users).toHaveLength(1);
    const user = users[0]!.getArgumentsContent() ?? '';
    expect(user).toMatch(/^\d+(:\d+)?$/);
    expect(user.split(':')[0]).not.toBe('0');
  });

  it('bakes no secrets into ENV or ARG', () => {
    for (const instruction of dockerfile.getInstructions()) {
      if (!['ENV', 'ARG'].includes(instruction.getKeyword())) continue;
      expect(instruction.getArgumentsContent() ?? '').not.toMatch(
        /(SECRET|PASSWORD|TOKEN|API_KEY|ACCESS_KEY)\w*\s*=/i,
      );
    }
  });

  it('copies only what exists: context paths in the repo, --from stages defined earlier', () => {
    const stages = new Set<string>();
    for (const instruction of dockerfile.getInstructions()) {
      const keyword = instruction.getKeyword();
      if (keyword === 'FROM') {
        const stage = froms
          .find((f) => f.getRange().start.line === instruction.getRange().start.line)
          ?.getBuildStage();
        if (stage) stages.add(stage);
        continue;
      }
      if (keyword !== 'COPY') continue;
      const copy = instruction as Copy;
      const fromFlag = copy
        .getFlags()
        .find((flag) => flag.getName() === 'from')
        ?.getValue();
      const paths = (copy.getArguments() ?? []).map((a) => a.getValue());
      const sources = paths.slice(0, -1);
      expect(sources.length).toBeGreaterThan(0);
      if (fromFlag) {
        expect(stages.has(fromFlag)).toBe(true);
      } else {
        for (const source of sources) expect(existsSync(join(ROOT, source))).toBe(true);
      }
    }
  });

  it('is ignored by .dockerignore where it would leak local state into the build context', () => {
    const ignored = readFileSync(join(ROOT, '.dockerignore'), 'utf8').split('\n');
    expect(ignored).toEqual(expect.arrayContaining(['node_modules', '**/dist', '.env', '.git']));
  });
});
