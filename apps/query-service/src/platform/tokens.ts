export const VECTOR_STORE = Symbol('VECTOR_STORE');
export const LEXICAL_INDEX = Symbol('LEXICAL_INDEX');
export const SEARCH_CACHE = Symbol('SEARCH_CACHE');
export const GENERATIONS = Symbol('GENERATIONS');
export const EVENT_PRODUCER = Symbol('EVENT_PRODUCER');
export const TOKEN_VERIFIER = Symbol('TOKEN_VERIFIER');
export const SEARCH_TUNING = Symbol('SEARCH_TUNING');
export const RERANKER = Symbol('RERANKER');
