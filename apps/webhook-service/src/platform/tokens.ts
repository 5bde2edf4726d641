export { TOKEN_VERIFIER } from '@kb/http';
export { KAFKA } from '@kb/kafka';
export const WEBHOOK_DB = Symbol('WEBHOOK_DB');
export const CLOCK = Symbol('CLOCK');
export const RECEIVER_SENDER = Symbol('RECEIVER_SENDER');
/** The `SecretBox` that seals and opens signing secrets at rest. */
export const SECRET_BOX = Symbol('SECRET_BOX');

/** The time, injected so tests can move it. */
export type Clock = () => Date;
