import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * Migration names are `<UTC yyyymmdd>T<hhmm>_<what>` and a new one is dated when it is written, so
 * it sorts after every migration already applied anywhere (ADR 38). Files named before that rule
 * are dated up to 2026-11-30 (ahead of the day they were written); the migrator applies a name that
 * sorts before an applied one, and `test/schema.int-spec.ts` of each owner proves a migration dated
 * now applies on a database that ran every existing one.
 */
const ROOT = join(__dirname, '../../..');
const NAME = /^(\d{8})T(\d{4})_[a-z0-9]+(?:_[a-z0-9]+)*\.ts$/;
/** The last name dated ahead of its commit; nothing newer may be dated in the future. */
const DATED_AHEAD_UNTIL = '20261130T1010';

function migrationFolders(): string[] {
  return ['apps', 'libs'].flatMap((top) =>
    readdirSync(join(ROOT, top))
      .map((project) => join(ROOT, top, project, 'src', 'migrations'))
      .filter((folder) => {
        try {
          return readdirSync(folder).length > 0;
        } catch {
          return false;
        }
      }),
  );
}

const stampOf = (file: string): string => file.slice(0, 13);

describe('migration names', () => {
  const folders = migrationFolders();
  const files = folders.flatMap((folder) =>
    readdirSync(folder)
      .filter((file) => file !== 'index.ts' && !file.endsWith('.spec.ts'))
      .map((file) => ({ folder, file })),
  );

  it('finds the migration folders', () => {
    expect(folders.length).toBeGreaterThanOrEqual(7);
  });

  it('names every file <yyyymmdd>T<hhmm>_<snake_case>', () => {
    const misnamed = files.filter(({ file }) => !NAME.test(file));
    expect(misnamed.map(({ folder, file }) => relative(ROOT, join(folder, file)))).toEqual([]);
  });

  it('dates no new migration in the future', () => {
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 16);
    const limit = tomorrow.replace(/[-:]/g, '');
    const ahead = files
      .map(({ file }) => file)
      .filter((file) => stampOf(file) > limit && stampOf(file) > DATED_AHEAD_UNTIL);
    expect(ahead).toEqual([]);
  });

  it.each(folders.map((folder) => [relative(ROOT, folder), folder]))(
    '%s registers every file under its own name',
    (_path, folder) => {
      const index = readFileSync(join(folder, 'index.ts'), 'utf8');
      for (const file of readdirSync(folder)) {
        if (file === 'index.ts' || file.endsWith('.spec.ts')) continue;
        expect(index).toContain(`'${file.replace(/\.ts$/, '')}'`);
      }
    },
  );
});
