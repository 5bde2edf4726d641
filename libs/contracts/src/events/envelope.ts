import { randomUUID } from 'node:crypto';

import { z } from 'zod';

/** Every Kafka message value is one envelope; the payload schema depends on the topic. */
export const envelopeSchema = <P extends z.ZodType>(payload: P) =>
  z.object({
    id: z.uuid(),
    type: z.string().min(1),
    schemaVersion: z.number().int().positive(),
    occurredAt: z.iso.datetime(),
    tenantId: z.string().min(1),
    payload,
  });

export interface Envelope<P> {
  id: string;
  type: string;
  schemaVersion: number;
  occurredAt: string;
  tenantId: string;
  payload: P;
}

export function newEnvelope<P>(
  type: string,
  tenantId: string,
  payload: P,
  now: Date = new Date(),
): Envelope<P> {
  return {
    id: randomUUID(),
    type,
    schemaVersion: 1,
    occurredAt: now.toISOString(),
    tenantId,
    payload,
  };
}
