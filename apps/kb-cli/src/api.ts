// What tools/bench (the benchmarks and evaluations, `kb-tools`) uses of the CLI's API clients.
// The tools call the public APIs the way `kb` does; this file is their only way in.
export { KbClient, type KbEndpoints, mapPool } from './client/kb-client';
export { knowledgeBaseStats, type RestEndpoint } from './collections/collections.command';
export { kbHome, localJwtSecret, localToken } from './token/local-secret';
