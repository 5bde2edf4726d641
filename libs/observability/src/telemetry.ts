import type { IncomingMessage, ServerResponse } from 'node:http';

import {
  type Attributes,
  context,
  type Meter,
  metrics,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';
import { suppressTracing } from '@opentelemetry/core';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { GrpcInstrumentation } from '@opentelemetry/instrumentation-grpc';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { KafkaJsInstrumentation } from '@opentelemetry/instrumentation-kafkajs';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { RedisInstrumentation } from '@opentelemetry/instrumentation-redis';
import { NodeSDK, resources, tracing } from '@opentelemetry/sdk-node';

import { knowledgeBaseLabels } from './knowledge-base-label';

let sdk: NodeSDK | undefined;
let prometheus: PrometheusExporter | undefined;

/**
 * Starts OpenTelemetry for a service. Must run before the instrumented libraries are loaded
 * (import `@kb/observability/telemetry` first in main.ts). HTTP, gRPC, pg, Redis and kafkajs
 * are instrumented; kafkajs carries W3C trace context in message headers, so one trace follows a
 * document through every hop. Spans are exported over OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT
 * (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set; otherwise context still propagates, spans are
 * not recorded and nothing is sent. Metrics are served for Prometheus by `GET /metrics` (see `serveMetrics`).
 * OTEL_SDK_DISABLED=true turns it all off. METRICS_MAX_KNOWLEDGE_BASES caps the `knowledge_base`
 * label (see `knowledgeBaseLabels`).
 */
export function startTelemetry(serviceName: string): void {
  knowledgeBaseLabels(); // a bad METRICS_MAX_KNOWLEDGE_BASES fails the boot, not a request
  if (sdk || process.env['OTEL_SDK_DISABLED'] === 'true') return;
  const exporting = Boolean(
    process.env['OTEL_EXPORTER_OTLP_ENDPOINT'] ?? process.env['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'],
  );
  // Metrics are pulled by Prometheus from each service's own HTTP port (GET /metrics).
  prometheus = new PrometheusExporter({ preventServerStart: true });
  sdk = new NodeSDK({
    resource: resources.resourceFromAttributes({ 'service.name': serviceName }),
    metricReaders: [prometheus],
    spanProcessors: exporting
      ? [new tracing.BatchSpanProcessor(new OTLPTraceExporter(), { scheduledDelayMillis: 500 })]
      : [],
    // With nowhere to send spans, none is recorded: spans still get ids, so trace context still
    // propagates (logs carry it), but no span objects, attributes or events are built for
    // nothing, which cost a cache hit a measurable share of its CPU (docs/adr/0029).
    ...(exporting ? {} : { sampler: new tracing.AlwaysOffSampler() }),
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (req) => (req.url ?? '').startsWith('/health'),
      }),
      new GrpcInstrumentation(),
      new PgInstrumentation(),
      new RedisInstrumentation(),
      new KafkaJsInstrumentation(),
    ],
  });
  sdk.start();
}

/** The suite's meter: counters and histograms named `kb_*` (see docs/adr/0006). */
export function meter(): Meter {
  return metrics.getMeter('kb');
}

/** Writes the Prometheus text exposition of this process's metrics; false when telemetry is off. */
export function serveMetrics(request: IncomingMessage, response: ServerResponse): boolean {
  if (!prometheus) return false;
  prometheus.getMetricsRequestHandler(request, response);
  return true;
}

/** Flushes and stops telemetry; called last at shutdown. */
export async function shutdownTelemetry(): Promise<void> {
  await sdk?.shutdown().catch(() => undefined);
  sdk = undefined;
  prometheus = undefined;
}

/** Runs `fn` inside a span named for a pipeline step; records failures on the span. */
export async function withSpan<T>(
  name: string,
  attributes: Attributes,
  fn: () => Promise<T>,
): Promise<T> {
  return trace.getTracer('kb').startActiveSpan(name, { attributes }, async (span) => {
    try {
      return await fn();
    } catch (error) {
      span.recordException(error as Error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: String(error) });
      throw error;
    } finally {
      span.end();
    }
  });
}

/** Adds attributes to the active span (e.g. an id known only once the work is done). */
export function annotateActiveSpan(attributes: Attributes): void {
  trace.getActiveSpan()?.setAttributes(attributes);
}

/** The active trace context as W3C headers, to store beside work that runs later (the outbox). */
export function captureTraceHeaders(): Record<string, string> {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier;
}

/**
 * Runs `fn` with tracing suppressed: instrumentations start no spans and inject no trace context.
 * For a send whose messages carry the trace headers of the code that wrote them
 * (`captureTraceHeaders`), so that a producer span does not replace them.
 */
export function untraced<T>(fn: () => T): T {
  return context.with(suppressTracing(context.active()), fn);
}

/**
 * Runs `fn` in a consumer span (`<topic> process`) whose parent is the trace context a Kafka
 * message carries in its headers. The kafkajs instrumentation does this for `eachMessage` only;
 * a consumer that reads batches (`eachBatch`) calls this per message so that each message's work
 * stays in the trace of the request that produced it.
 */
export async function withConsumedMessage<T>(
  topic: string,
  headers: Record<string, Buffer | string | Array<Buffer | string> | undefined> | undefined,
  fn: () => Promise<T>,
): Promise<T> {
  const carrier: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers ?? {})) {
    const first = Array.isArray(value) ? value[0] : value;
    if (first !== undefined) carrier[name] = first.toString();
  }
  const parent = propagation.extract(ROOT_CONTEXT, carrier);
  return trace.getTracer('kb').startActiveSpan(
    `${topic} process`,
    {
      kind: SpanKind.CONSUMER,
      attributes: { 'messaging.system': 'kafka', 'messaging.destination.name': topic },
    },
    parent,
    async (span) => {
      try {
        return await fn();
      } catch (error) {
        span.recordException(error as Error);
        span.setStatus({ code: SpanStatusCode.ERROR, message: String(error) });
        throw error;
      } finally {
        span.end();
      }
    },
  );
}

/** The current trace and span ids, for log lines. */
export function currentTraceIds(): { trace_id: string; span_id: string } | undefined {
  const span = trace.getActiveSpan();
  if (!span) return undefined;
  const { traceId, spanId } = span.spanContext();
  return { trace_id: traceId, span_id: spanId };
}
