import { Cron } from 'croner';

import { SourceError, SourceErrorCode } from './sources.errors';

/**
 * When a cron `schedule` (read in `timezone`, default UTC) is next due after `after`, by croner;
 * 400 `invalid_schedule` when the expression or the time zone does not parse, or never fires.
 */
export function nextRunOf(schedule: string, timezone: string | null, after: Date): Date {
  let next: Date | null;
  try {
    next = new Cron(schedule, { paused: true, timezone: timezone ?? 'UTC' }).nextRun(after);
  } catch (error) {
    throw new SourceError(
      SourceErrorCode.InvalidSchedule,
      `schedule "${schedule}"${timezone ? ` in ${timezone}` : ''} is not a cron expression croner reads: ${(error as Error).message}`,
    );
  }
  if (!next) {
    throw new SourceError(SourceErrorCode.InvalidSchedule, `schedule "${schedule}" never fires`);
  }
  return next;
}
