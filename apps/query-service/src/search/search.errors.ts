import { ApiError } from '@kb/http';

export enum SearchErrorCode {
  Unavailable = 'search_unavailable',
}

export class SearchError extends ApiError {
  constructor(code: SearchErrorCode, message: string) {
    super(
      (() => {
        switch (code) {
          case SearchErrorCode.Unavailable:
            return 503;
        }
      })(),
      code,
      message,
    );
  }
}
