import { setTimeout as sleep } from 'node:timers/promises';

import { collectStageTimings, parseServerTiming, timedStage } from './server-timing';

describe('stage timings', () => {
  it('records the stages run inside a timed request, across awaits and in parallel', async () => {
    const { result, timings } = await collectStageTimings(async () => {
      const [a] = await Promise.all([
        timedStage('slow', async () => {
          await sleep(20);
          return 'a';
        }),
        timedStage('fast', async () => 'b'),
      ]);
      return a;
    });
    expect(result).toBe('a');
    const byName = new Map(timings.list().map((stage) => [stage.name, stage.ms]));
    expect([...byName.keys()].sort()).toEqual(['fast', 'slow']);
    expect(byName.get('slow')).toBeGreaterThanOrEqual(15);
    expect(byName.get('fast')).toBeLessThan(byName.get('slow')!);
  });

  it('records a stage that failed, and keeps requests apart', async () => {
    const first = collectStageTimings(async () => {
      await sleep(5);
      await timedStage('first', async () => undefined);
    });
    const second = collectStageTimings(async () => {
      await timedStage('second', async () => {
        throw new Error('down');
      }).catch(() => undefined);
    });
    const [a, b] = await Promise.all([first, second]);
    expect(a.timings.list().map((s) => s.name)).toEqual(['first']);
    expect(b.timings.list().map((s) => s.name)).toEqual(['second']);
  });

  it('only runs the stage outside a timed request', async () => {
    await expect(timedStage('alone', async () => 42)).resolves.toBe(42);
  });

  it('writes and reads the Server-Timing header', async () => {
    const { timings } = await collectStageTimings(async () => {
      await timedStage('embed', async () => undefined);
    });
    timings.add('total', 12.345);
    const header = timings.header();
    expect(header).toMatch(/^embed;dur=[\d.]+, total;dur=12\.35$/);
    expect(parseServerTiming(header).map((s) => s.name)).toEqual(['embed', 'total']);
    expect(parseServerTiming('db;desc="x";dur=2.5, cache, bad;dur=x')).toEqual([
      { name: 'db', ms: 2.5 },
      { name: 'cache', ms: 0 },
      { name: 'bad', ms: 0 },
    ]);
  });
});
