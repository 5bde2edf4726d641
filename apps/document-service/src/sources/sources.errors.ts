import { DomainError, ErrorKind } from '@kb/errors';

export enum SourceErrorCode {
  NotFound = 'source_not_found',
  /** A folder source is synced by the CLI, from the machine that has the folder. */
  NotSyncable = 'source_not_syncable',
  /** The bucket is the service's own (originals of every tenant) or cannot be read. */
  BucketRefused = 'source_bucket_refused',
}

const KIND: Record<SourceErrorCode, ErrorKind> = {
  [SourceErrorCode.NotFound]: ErrorKind.NotFound,
  [SourceErrorCode.NotSyncable]: ErrorKind.FailedPrecondition,
  [SourceErrorCode.BucketRefused]: ErrorKind.InvalidArgument,
};

export class SourceError extends DomainError<SourceErrorCode> {
  constructor(code: SourceErrorCode, message: string) {
    super(code, KIND[code], message);
  }
}
