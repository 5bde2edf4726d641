import { DomainError, ErrorKind } from '@kb/errors';

export enum SearchErrorCode {
  Unavailable = 'search_unavailable',
}

const KIND: Record<SearchErrorCode, ErrorKind> = {
  [SearchErrorCode.Unavailable]: ErrorKind.Unavailable,
};

export class SearchError extends DomainError<SearchErrorCode> {
  constructor(code: SearchErrorCode, message: string) {
    super(code, KIND[code], message);
  }
}
