export { TOKEN_VERIFIER } from '@kb/http';
export { EVENT_PRODUCER, KAFKA } from '@kb/kafka';
export const ENFORCER = Symbol('ENFORCER');
export const ACL_DB = Symbol('ACL_DB');
export const CLOCK = Symbol('CLOCK');
