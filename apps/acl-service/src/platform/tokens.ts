export { TOKEN_VERIFIER } from '@kb/http';
export const ENFORCER = Symbol('ENFORCER');
export const ACL_DB = Symbol('ACL_DB');
export const EVENT_PRODUCER = Symbol('EVENT_PRODUCER');
export const KAFKA = Symbol('KAFKA');
