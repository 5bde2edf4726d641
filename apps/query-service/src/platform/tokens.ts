export const EMBEDDING_PROVIDER = Symbol('EMBEDDING_PROVIDER');
export const VECTOR_STORE = Symbol('VECTOR_STORE');
export const LEXICAL_INDEX = Symbol('LEXICAL_INDEX');
