import type { Attributes } from '@opentelemetry/api';

/** The label the counters and histograms of work in a knowledge base carry (docs/adr/0041). */
export const KNOWLEDGE_BASE_LABEL = 'knowledge_base';

/**
 * The values that are not a knowledge base's id. Each starts with `_`, which an id cannot
 * (`^[a-z0-9][a-z0-9_-]{0,62}$`), so none can be mistaken for a knowledge base named so.
 */
export const KnowledgeBaseLabelValue = {
  /** An id past the cap, or not shaped like an id. */
  other: '_other',
  /** Work in several knowledge bases at once: a search over several, a document in several. */
  multiple: '_multiple',
  /** A document in no knowledge base. */
  none: '_none',
  /** A search that names no knowledge base: the whole tenant. */
  all: '_all',
} as const;

export const DEFAULT_MAX_KNOWLEDGE_BASES = 100;
const MAX_ENV = 'METRICS_MAX_KNOWLEDGE_BASES';
const ID = /^[a-z0-9][a-z0-9_-]{0,62}$/;

/**
 * Bounds the `knowledge_base` label: the first `max` distinct ids this process labels keep their
 * own series, every later one is `_other`, so a tenant creating knowledge bases cannot grow the
 * series without bound. `max` 0 turns the label off. A call is a Set lookup; nothing is
 * allocated once an id is admitted, as the search cache-hit path needs.
 */
export class KnowledgeBaseLabels {
  private readonly admitted = new Set<string>();

  constructor(readonly max: number) {
    if (!Number.isSafeInteger(max) || max < 0) {
      throw new Error(`${MAX_ENV} must be a whole number ≥ 0, got ${max}`);
    }
  }

  get enabled(): boolean {
    return this.max > 0;
  }

  /**
   * The label value of work in `ids`: the id of the one knowledge base, `_multiple` for several
   * (one series per observation, so a sum over the label is still the total and a histogram
   * holds each duration once), `empty` for none. Undefined when the label is off.
   */
  valueOf(
    ids: string | readonly string[] | undefined,
    empty: string = KnowledgeBaseLabelValue.none,
  ): string | undefined {
    if (this.max === 0) return undefined;
    if (ids === undefined) return empty;
    if (typeof ids === 'string') return this.admit(ids);
    if (ids.length === 0) return empty;
    if (ids.length === 1) return this.admit(ids[0]!);
    // The same id twice is still one knowledge base.
    const first = ids[0]!;
    for (let i = 1; i < ids.length; i++) {
      if (ids[i] !== first) return KnowledgeBaseLabelValue.multiple;
    }
    return this.admit(first);
  }

  /**
   * `attributes` with the label set to the value of `ids` (left as they are when the label is
   * off). Sets it on the object given: pass a fresh one, not a shared constant.
   */
  label<A extends Attributes>(
    attributes: A,
    ids: string | readonly string[] | undefined,
    empty?: string,
  ): A {
    const value = this.valueOf(ids, empty);
    if (value !== undefined) (attributes as Attributes)[KNOWLEDGE_BASE_LABEL] = value;
    return attributes;
  }

  private admit(id: string): string {
    if (this.admitted.has(id)) return id;
    if (this.admitted.size >= this.max || !ID.test(id)) return KnowledgeBaseLabelValue.other;
    this.admitted.add(id);
    return id;
  }
}

/** The cap METRICS_MAX_KNOWLEDGE_BASES sets (default 100); throws on a value that is not one. */
export function maxKnowledgeBasesFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env[MAX_ENV]?.trim();
  if (raw === undefined || raw === '') return DEFAULT_MAX_KNOWLEDGE_BASES;
  if (!/^\d+$/.test(raw)) throw new Error(`${MAX_ENV} must be a whole number ≥ 0, got "${raw}"`);
  return new KnowledgeBaseLabels(Number(raw)).max;
}

let processLabels: KnowledgeBaseLabels | undefined;

/** This process's labels, capped by METRICS_MAX_KNOWLEDGE_BASES; `startTelemetry` reads it first. */
export function knowledgeBaseLabels(): KnowledgeBaseLabels {
  processLabels ??= new KnowledgeBaseLabels(maxKnowledgeBasesFromEnv());
  return processLabels;
}

/** The `knowledge_base` value of work in `ids` in this process; see `KnowledgeBaseLabels.valueOf`. */
export function knowledgeBaseLabel(
  ids: string | readonly string[] | undefined,
  empty?: string,
): string | undefined {
  return knowledgeBaseLabels().valueOf(ids, empty);
}

/** `attributes` with this process's `knowledge_base` label; see `KnowledgeBaseLabels.label`. */
export function withKnowledgeBase<A extends Attributes>(
  attributes: A,
  ids: string | readonly string[] | undefined,
  empty?: string,
): A {
  return knowledgeBaseLabels().label(attributes, ids, empty);
}
