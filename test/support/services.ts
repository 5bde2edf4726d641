// Typed entry to the launcher shared with `npm start`.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const launcher = require('../../scripts/lib/services.js') as typeof import('./services.d');

export const {
  SERVICES,
  DATABASE_ROLES,
  databaseEnv,
  serviceEnv,
  startServices,
  startService,
  waitReady,
  stopServices,
} = launcher;
export type { RunningService } from './services.d';
