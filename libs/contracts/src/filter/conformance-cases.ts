import type { DocumentAttributes } from '../document';

/**
 * Shared filter conformance cases: four documents with hand-picked attributes, and filters with the
 * documents each must return, written out by hand. The filter language's reference evaluator, the
 * pgvector and Pinecone translations and the lexical index all run these same cases (hence exported).
 */
export const FILTER_DOCS = ['A', 'B', 'C', 'D'] as const;
export type FilterDoc = (typeof FILTER_DOCS)[number];

export const FILTER_DOC_ATTRIBUTES: Record<FilterDoc, DocumentAttributes> = {
  A: {
    knowledgeBaseIds: ['kb1'],
    tags: ['finance', 'q1'],
    uploadedAt: Date.parse('2026-01-10T00:00:00Z'),
    metadata: { author: 'ann', year: 2024, draft: true, langs: ['en', 'de'] },
    principals: ['u:ann', 'r:editor'],
  },
  B: {
    knowledgeBaseIds: ['kb1', 'kb2'],
    tags: ['finance'],
    uploadedAt: Date.parse('2026-03-01T00:00:00Z'),
    metadata: { author: 'bob', year: 2021 },
    principals: ['g:eng'],
  },
  C: {
    knowledgeBaseIds: ['kb2'],
    tags: [],
    uploadedAt: Date.parse('2026-05-01T00:00:00Z'),
    metadata: { author: 'ann', year: '2024' },
    principals: ['t:*'],
  },
  D: {
    knowledgeBaseIds: ['kb1'],
    tags: ['legal'],
    uploadedAt: Date.parse('2025-12-31T00:00:00Z'),
    metadata: {},
    principals: ['u:dan'],
  },
};

export interface FilterCase {
  name: string;
  /** Built from the run's document ids, since `document_id` filters name them. */
  filter: (ids: Record<FilterDoc, string>) => Record<string, unknown>;
  knowledgeBaseIds?: string[];
  /** The caller's principal set; absent means no ACL filter (a tenant admin). */
  principals?: string[];
  expected: FilterDoc[];
}

export const FILTER_CASES: FilterCase[] = [
  { name: 'no filter', filter: () => ({}), expected: ['A', 'B', 'C', 'D'] },
  { name: 'list field $eq contains', filter: () => ({ tags: 'finance' }), expected: ['A', 'B'] },
  {
    name: 'list field $in intersects',
    filter: () => ({ tags: { $in: ['q1', 'legal'] } }),
    expected: ['A', 'D'],
  },
  {
    name: 'list field $nin (empty list matches)',
    filter: () => ({ tags: { $nin: ['finance'] } }),
    expected: ['C', 'D'],
  },
  { name: 'list field $ne', filter: () => ({ tags: { $ne: 'finance' } }), expected: ['C', 'D'] },
  {
    name: 'metadata string $eq',
    filter: () => ({ 'metadata.author': 'ann' }),
    expected: ['A', 'C'],
  },
  {
    name: 'metadata $eq compares with type (2024 is not "2024")',
    filter: () => ({ 'metadata.year': 2024 }),
    expected: ['A'],
  },
  {
    name: 'metadata $gte matches numbers only',
    filter: () => ({ 'metadata.year': { $gte: 2022 } }),
    expected: ['A'],
  },
  { name: 'metadata $lt', filter: () => ({ 'metadata.year': { $lt: 2024 } }), expected: ['B'] },
  {
    name: 'metadata $exists true',
    filter: () => ({ 'metadata.draft': { $exists: true } }),
    expected: ['A'],
  },
  {
    name: 'metadata $exists false',
    filter: () => ({ 'metadata.draft': { $exists: false } }),
    expected: ['B', 'C', 'D'],
  },
  {
    // Object.prototype's members are no document's keys, in memory as in SQL (review L1).
    name: 'metadata $exists on a key named like an Object member',
    filter: () => ({ 'metadata.constructor': { $exists: true } }),
    expected: [],
  },
  {
    name: 'metadata $exists false on a key named like an Object member',
    filter: () => ({ 'metadata.valueOf': { $exists: false } }),
    expected: ['A', 'B', 'C', 'D'],
  },
  { name: 'metadata boolean', filter: () => ({ 'metadata.draft': true }), expected: ['A'] },
  { name: 'metadata list contains', filter: () => ({ 'metadata.langs': 'de' }), expected: ['A'] },
  {
    name: 'metadata $ne (missing key matches)',
    filter: () => ({ 'metadata.author': { $ne: 'ann' } }),
    expected: ['B', 'D'],
  },
  {
    name: 'metadata $nin',
    filter: () => ({ 'metadata.author': { $nin: ['ann', 'bob'] } }),
    expected: ['D'],
  },
  {
    name: 'uploaded_at from an ISO timestamp',
    filter: () => ({ uploaded_at: { $gte: '2026-01-01T00:00:00Z' } }),
    expected: ['A', 'B', 'C'],
  },
  {
    name: 'two operators on one field are AND-ed',
    filter: () => ({
      uploaded_at: { $gt: '2026-01-01T00:00:00Z', $lt: Date.parse('2026-03-01T00:00:00Z') },
    }),
    expected: ['A'],
  },
  {
    name: '$or',
    filter: () => ({ $or: [{ tags: 'legal' }, { 'metadata.author': 'bob' }] }),
    expected: ['B', 'D'],
  },
  {
    name: '$and with a nested $or',
    filter: () => ({
      $and: [
        { tags: 'finance' },
        { $or: [{ 'metadata.year': { $lte: 2021 } }, { 'metadata.draft': true }] },
      ],
    }),
    expected: ['A', 'B'],
  },
  {
    name: 'document_id $in',
    filter: (ids) => ({ document_id: { $in: [ids.A, ids.C] } }),
    expected: ['A', 'C'],
  },
  {
    name: 'document_id $ne',
    filter: (ids) => ({ document_id: { $ne: ids.A } }),
    expected: ['B', 'C', 'D'],
  },
  {
    name: 'knowledge base scope',
    filter: () => ({}),
    knowledgeBaseIds: ['kb2'],
    expected: ['B', 'C'],
  },
  {
    name: 'knowledge base scope and a filter',
    filter: () => ({ 'metadata.author': 'ann' }),
    knowledgeBaseIds: ['kb1'],
    expected: ['A'],
  },
  { name: 'nothing matches', filter: () => ({ tags: 'none' }), expected: [] },
  {
    name: 'ACL: a user sees documents granted to them and to the tenant',
    filter: () => ({}),
    principals: ['u:ann', 't:*'],
    expected: ['A', 'C'],
  },
  {
    name: 'ACL: through a group, with a filter',
    filter: () => ({ tags: 'finance' }),
    principals: ['u:zoe', 'g:eng', 't:*'],
    expected: ['B'],
  },
  {
    name: 'ACL: through a role, within a knowledge base',
    filter: () => ({}),
    knowledgeBaseIds: ['kb1'],
    principals: ['u:zoe', 'r:editor', 't:*'],
    expected: ['A'],
  },
  { name: 'ACL: no principals sees nothing', filter: () => ({}), principals: [], expected: [] },
];
