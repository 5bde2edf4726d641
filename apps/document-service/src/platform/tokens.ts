/** Injection tokens for the service's external adapters. */
// Shared with the libraries that define them (one symbol per process).
export { EVENT_PRODUCER, KAFKA } from '@kb/kafka';
export { BLOB_STORE } from '@kb/storage';
export const DB = Symbol('DB');
export const CLOCK = Symbol('CLOCK');
/** The tenants' index generations (`@kb/index-state`), which search results are cached under. */
export const GENERATIONS = Symbol('GENERATIONS');

export type Clock = () => Date;
/** The quota check uploads and knowledge-base creation ask first (usage/usage.service.ts). */
export const QUOTA_CHECK = Symbol('QUOTA_CHECK');
