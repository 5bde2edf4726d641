// Loaded first by main.ts: instrumentation must patch libraries before anything requires them.
import { startTelemetry } from '@kb/observability/telemetry';

startTelemetry('webhook-service');
