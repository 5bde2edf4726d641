/**
 * PermanentError moved to @kb/errors beside the one transient/permanent classification (ADR 17);
 * re-exported here, where consumers have always imported it from.
 */
export { isPermanent, PermanentError } from '@kb/errors';
