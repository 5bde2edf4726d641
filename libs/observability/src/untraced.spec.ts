import { context, propagation, trace } from '@opentelemetry/api';
import { node } from '@opentelemetry/sdk-node';

import { untraced } from './telemetry';

/**
 * What the outbox relay relies on (libs/kafka publishRaw): inside `untraced`, what an
 * instrumentation does for a produce request (start a span, inject it into the message headers)
 * leaves the headers alone, so each message keeps the trace context it was written with.
 */
describe('untraced', () => {
  const provider = new node.NodeTracerProvider();
  beforeAll(() => provider.register());
  afterAll(async () => {
    await provider.shutdown();
    trace.disable();
    context.disable();
    propagation.disable();
  });

  const asInstrumentationWould = () => {
    const span = trace.getTracer('spec').startSpan('send kb.audit.v1');
    const headers: Record<string, string> = {};
    propagation.inject(trace.setSpan(context.active(), span), headers);
    const recording = span.isRecording();
    span.end();
    return { headers, recording };
  };

  it('starts no span and injects no trace context, inside a traced request', () => {
    trace.getTracer('spec').startActiveSpan('request', (request) => {
      const traced = asInstrumentationWould();
      expect(traced.headers['traceparent']).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-0\d$/);
      expect(traced.recording).toBe(true);

      expect(untraced(asInstrumentationWould)).toEqual({ headers: {}, recording: false });
      request.end();
    });
  });

  it('returns what it runs, and leaves the context as it was afterwards', async () => {
    expect(await untraced(async () => 'sent')).toBe('sent');
    expect(asInstrumentationWould().recording).toBe(true);
  });
});
