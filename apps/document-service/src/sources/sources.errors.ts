import { DomainError, ErrorKind } from '@kb/errors';

export enum SourceErrorCode {
  NotFound = 'source_not_found',
  /** A folder source is synced by the CLI, from the machine that has the folder. */
  NotSyncable = 'source_not_syncable',
  /** The bucket is the service's own (originals of every tenant) or cannot be read. */
  BucketRefused = 'source_bucket_refused',
  /** A sync of this source is running: one at a time. */
  SyncInProgress = 'sync_in_progress',
  SyncNotFound = 'sync_not_found',
}

const KIND: Record<SourceErrorCode, ErrorKind> = {
  [SourceErrorCode.NotFound]: ErrorKind.NotFound,
  [SourceErrorCode.NotSyncable]: ErrorKind.FailedPrecondition,
  [SourceErrorCode.BucketRefused]: ErrorKind.InvalidArgument,
  [SourceErrorCode.SyncInProgress]: ErrorKind.FailedPrecondition,
  [SourceErrorCode.SyncNotFound]: ErrorKind.NotFound,
};

export class SourceError extends DomainError<SourceErrorCode> {
  constructor(code: SourceErrorCode, message: string) {
    super(code, KIND[code], message);
  }
}
