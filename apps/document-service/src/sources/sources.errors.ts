import { DomainError, ErrorKind } from '@kb/errors';

export enum SourceErrorCode {
  NotFound = 'source_not_found',
  /** A folder source is synced by the CLI, from the machine that has the folder. */
  NotSyncable = 'source_not_syncable',
  /**
   * No operator grant lets this tenant read the bucket and prefix (SOURCE_ALLOWLIST); the
   * documents bucket never is. The same answer whether the bucket exists or not.
   */
  NotAllowed = 'source_not_allowed',
  /** The caller lost `write` on documents while their sync ran: it stopped. */
  AccessRevoked = 'access_revoked',
  /** An object is larger than MAX_UPLOAD_BYTES: a failure of that file, not of the sync. */
  TooLarge = 'too_large',
  /** More objects under the prefix than SOURCE_SYNC_MAX_FILES: nothing is synced. */
  TooManyFiles = 'too_many_files',
  /** A sync of this source is running: one at a time. */
  SyncInProgress = 'sync_in_progress',
  SyncNotFound = 'sync_not_found',
  /** A client's sync report names a sync that is not running (finished, or taken over). */
  SyncNotRunning = 'sync_not_running',
  /** The schedule is not a cron expression, or its time zone is unknown. */
  InvalidSchedule = 'invalid_schedule',
}

const KIND: Record<SourceErrorCode, ErrorKind> = {
  [SourceErrorCode.NotFound]: ErrorKind.NotFound,
  [SourceErrorCode.NotSyncable]: ErrorKind.FailedPrecondition,
  [SourceErrorCode.NotAllowed]: ErrorKind.PermissionDenied,
  [SourceErrorCode.AccessRevoked]: ErrorKind.PermissionDenied,
  [SourceErrorCode.TooLarge]: ErrorKind.InvalidArgument,
  [SourceErrorCode.TooManyFiles]: ErrorKind.FailedPrecondition,
  [SourceErrorCode.SyncInProgress]: ErrorKind.FailedPrecondition,
  [SourceErrorCode.SyncNotFound]: ErrorKind.NotFound,
  [SourceErrorCode.InvalidSchedule]: ErrorKind.InvalidArgument,
  [SourceErrorCode.SyncNotRunning]: ErrorKind.FailedPrecondition,
};

export class SourceError extends DomainError<SourceErrorCode> {
  constructor(code: SourceErrorCode, message: string) {
    super(code, KIND[code], message);
  }
}
