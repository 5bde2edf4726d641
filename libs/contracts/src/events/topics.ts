import { z } from 'zod';

import { auditEventSchema, policyChangedSchema } from './acl.events';
import { collectionEventSchema } from './collection.events';
import {
  chunksEmbeddedSchema,
  documentEventSchema,
  documentParsedSchema,
  documentStatusChangedSchema,
} from './document.events';
import { type Envelope, envelopeSchema } from './envelope';

/** Kafka topic names. Versioned: a breaking payload change gets a new topic. */
export const Topics = {
  document: 'kb.document.v1',
  documentParsed: 'kb.document.parsed.v1',
  chunksEmbedded: 'kb.chunks.embedded.v1',
  documentStatus: 'kb.document.status.v1',
  acl: 'kb.acl.v1',
  audit: 'kb.audit.v1',
  collection: 'kb.collection.v1',
} as const;
export type Topic = (typeof Topics)[keyof typeof Topics];

/** The payload schema of each topic: a handler cannot receive the wrong shape. */
export const topicPayloadSchemas = {
  [Topics.document]: documentEventSchema,
  [Topics.documentParsed]: documentParsedSchema,
  [Topics.chunksEmbedded]: chunksEmbeddedSchema,
  [Topics.documentStatus]: documentStatusChangedSchema,
  [Topics.acl]: policyChangedSchema,
  [Topics.audit]: auditEventSchema,
  [Topics.collection]: collectionEventSchema,
} satisfies Record<Topic, z.ZodType>;

export type TopicPayload<T extends Topic> = z.infer<(typeof topicPayloadSchemas)[T]>;
export type TopicEnvelope<T extends Topic> = Envelope<TopicPayload<T>>;

/** The event `type` written into the envelope for each topic. */
export const topicEventTypes: Record<Topic, string> = {
  [Topics.document]: 'kb.document',
  [Topics.documentParsed]: 'kb.document.parsed',
  [Topics.chunksEmbedded]: 'kb.chunks.embedded',
  [Topics.documentStatus]: 'kb.document.status',
  [Topics.acl]: 'kb.acl.policy_changed',
  [Topics.audit]: 'kb.audit',
  [Topics.collection]: 'kb.collection',
};

const envelopeSchemas: Record<string, z.ZodType> = Object.fromEntries(
  Object.entries(topicPayloadSchemas).map(([topic, payload]) => [topic, envelopeSchema(payload)]),
);

/** Parses a raw message value for `topic`; throws a ZodError on a malformed message. */
export function parseEnvelope<T extends Topic>(topic: T, value: unknown): TopicEnvelope<T> {
  const schema = envelopeSchemas[topic];
  if (!schema) throw new Error(`unknown topic ${topic}`);
  return schema.parse(value) as TopicEnvelope<T>;
}

/** Dead-letter topic of a consumer group: messages it could not process, with the reason in headers. */
export const deadLetterTopic = (groupId: string): string => `kb.dlq.${groupId}.v1`;
