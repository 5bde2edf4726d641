import { toTenantId } from '@kb/contracts';

import type { SourceView } from './source.model';
import { SourceScheduler } from './source.scheduler';
import { SourceError, SourceErrorCode } from './sources.errors';
import type { DueSource, SourcesRepository } from './sources.repository';

const now = new Date('2026-11-27T10:00:00Z');
const leasedUntil = new Date('2026-11-27T10:01:00Z');
const due = (id: string): DueSource => ({
  tenantId: toTenantId('t1'),
  source: { id, schedule: '*/5 * * * *', timezone: 'UTC' } as SourceView,
  leasedUntil,
});

/** Due sources once, then none; records where each was moved. */
function repository(sources: DueSource[]) {
  const moved = new Map<string, Date | null>();
  const repo = {
    claimDue: jest.fn(async () => Promise.resolve(sources.splice(0))),
    scheduleNext: jest.fn(async (d: DueSource, next: Date | null) => {
      moved.set(d.source.id, next);
      return Promise.resolve(true);
    }),
  };
  return { repo: repo as unknown as SourcesRepository, moved };
}

const scheduler = (repo: SourcesRepository, syncOnSchedule: jest.Mock) =>
  new SourceScheduler(repo, { syncOnSchedule }, () => now, { SOURCE_SCHEDULE_TICK_MS: 0 });

describe('SourceScheduler', () => {
  it('starts each due sync, then moves its source to the next time of its schedule', async () => {
    const { repo, moved } = repository([due('a'), due('b')]);
    const sync = jest.fn(async () => Promise.resolve({ id: 'sync-1' }));
    expect(await scheduler(repo, sync).tick()).toBe(2);
    expect(sync).toHaveBeenCalledTimes(2);
    expect(moved.get('a')).toEqual(new Date('2026-11-27T10:05:00Z'));
    expect(moved.get('b')).toEqual(new Date('2026-11-27T10:05:00Z'));
  });

  it('skips the time of a source still syncing, and of one that refuses to sync', async () => {
    const { repo, moved } = repository([due('running'), due('revoked')]);
    const sync = jest.fn(async (_tenant: unknown, source: SourceView) => {
      if (source.id === 'revoked') {
        throw new SourceError(SourceErrorCode.NotAllowed, 'grant withdrawn');
      }
      return Promise.resolve(undefined);
    });
    await scheduler(repo, sync).tick();
    expect([...moved.keys()].sort()).toEqual(['revoked', 'running']);
  });

  it('leaves a source claimed when its sync could not start for another reason', async () => {
    const { repo, moved } = repository([due('a')]);
    const sync = jest.fn(async () => Promise.reject(new Error('database unavailable')));
    await scheduler(repo, sync).tick();
    // Not moved: its lease ends and it is due again.
    expect(moved.size).toBe(0);
  });
});
