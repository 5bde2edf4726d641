export { TOKEN_VERIFIER } from '@kb/http';
export { EVENT_PRODUCER, KAFKA } from '@kb/kafka';
export const VECTOR_STORE = Symbol('VECTOR_STORE');
export const LEXICAL_INDEX = Symbol('LEXICAL_INDEX');
export const SEARCH_CACHE = Symbol('SEARCH_CACHE');
export const GENERATIONS = Symbol('GENERATIONS');
export const INDEX_STATE = Symbol('INDEX_STATE');
export const SEARCH_TUNING = Symbol('SEARCH_TUNING');
export const RERANKER = Symbol('RERANKER');
