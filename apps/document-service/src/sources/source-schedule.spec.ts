import { nextRunOf } from './source-schedule';
import { SourceErrorCode } from './sources.errors';

describe('nextRunOf', () => {
  const at = new Date('2026-11-27T01:02:00Z');

  it('answers the next time a cron expression fires, in UTC by default', () => {
    expect(nextRunOf('*/15 * * * *', null, at).toISOString()).toBe('2026-11-27T01:15:00.000Z');
    expect(nextRunOf('0 3 * * *', null, at).toISOString()).toBe('2026-11-27T03:00:00.000Z');
  });

  it('reads the expression in the time zone given', () => {
    // 03:00 in Paris is 02:00 UTC in November.
    expect(nextRunOf('0 3 * * *', 'Europe/Paris', at).toISOString()).toBe(
      '2026-11-27T02:00:00.000Z',
    );
  });

  it.each([
    ['not a cron expression', 'every day', null],
    ['an out-of-range field', '61 * * * *', null],
    ['an unknown time zone', '0 3 * * *', 'Mars/Olympus'],
  ])('refuses %s with invalid_schedule', (_label, cron, timezone) => {
    expect(() => nextRunOf(cron, timezone, at)).toThrow(
      expect.objectContaining({ code: SourceErrorCode.InvalidSchedule }),
    );
  });
});
