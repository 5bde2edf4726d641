import { DomainError, ErrorKind } from '@kb/errors';

export enum SearchErrorCode {
  Unavailable = 'search_unavailable',
  /** The search's time budget ran out before any strategy answered (docs/adr/0042). */
  DeadlineExceeded = 'deadline_exceeded',
  /** `similar` to a document whose vectors are not in any index space searched (yet). */
  SourceNotIndexed = 'similar_source_not_indexed',
}

const KIND: Record<SearchErrorCode, ErrorKind> = {
  [SearchErrorCode.Unavailable]: ErrorKind.Unavailable,
  [SearchErrorCode.DeadlineExceeded]: ErrorKind.DeadlineExceeded,
  [SearchErrorCode.SourceNotIndexed]: ErrorKind.FailedPrecondition,
};

export class SearchError extends DomainError<SearchErrorCode> {
  constructor(code: SearchErrorCode, message: string) {
    super(code, KIND[code], message);
  }
}
