import { documentMetadataSchema } from '../document';
import {
  FILTER_CASES,
  FILTER_DOC_ATTRIBUTES,
  FILTER_DOCS,
  type FilterDoc,
} from './conformance-cases';
import { FilterError, parseFilter } from './filter';
import { matchesFilter } from './filter-match';

describe('filter language', () => {
  const ids = { A: 'a', B: 'b', C: 'c', D: 'd' } satisfies Record<FilterDoc, string>;

  it.each(FILTER_CASES.filter((c) => !c.knowledgeBaseIds && !c.principals))(
    'reference semantics: $name',
    ({ filter, expected }) => {
      const node = parseFilter(filter(ids));
      const matched = FILTER_DOCS.filter((d) =>
        matchesFilter(node, { documentId: ids[d], ...FILTER_DOC_ATTRIBUTES[d] }),
      );
      expect(matched).toEqual(expected);
    },
  );

  it('treats undefined, null and {} as no filter', () => {
    expect(parseFilter(undefined)).toBeUndefined();
    expect(parseFilter(null)).toBeUndefined();
    expect(parseFilter({})).toBeUndefined();
  });

  it('parses shorthand equality and several operators on one field into one tree', () => {
    expect(parseFilter({ tags: 'x', 'metadata.n': { $gt: 1, $lte: 5 } })).toEqual({
      kind: 'and',
      children: [
        { kind: 'compare', field: { kind: 'tags' }, operator: '$eq', value: 'x' },
        { kind: 'compare', field: { kind: 'metadata', key: 'n' }, operator: '$gt', value: 1 },
        { kind: 'compare', field: { kind: 'metadata', key: 'n' }, operator: '$lte', value: 5 },
      ],
    });
  });

  it.each([
    [[], '', 'must be a JSON object'],
    ['tags', '', 'must be a JSON object'],
    [{ tags: { $regex: 'a.*' } }, 'tags.$regex', 'unknown operator "$regex"'],
    [{ $not: { tags: 'a' } }, '$not', 'unknown logical operator'],
    [{ owner: 'ann' }, 'owner', 'unknown field "owner"'],
    [{ 'metadata.a b': 1 }, 'metadata.a b', 'a metadata key starts with a letter'],
    [{ 'metadata.x': { $gt: '2024' } }, 'metadata.x.$gt', '$gt takes a number'],
    [{ tags: { $gt: 1 } }, 'tags.$gt', '$gt applies to times and numeric metadata only'],
    [{ tags: ['a', 'b'] }, 'tags', 'tags takes string values'],
    [{ tags: { $in: [] } }, 'tags.$in', '$in takes a non-empty array'],
    [{ tags: { $in: 'a' } }, 'tags.$in', '$in takes a non-empty array'],
    [
      { 'metadata.x': { $eq: null } },
      'metadata.x.$eq',
      'takes a string, a finite number or a boolean',
    ],
    [
      { 'metadata.x': { $eq: { nested: 1 } } },
      'metadata.x.$eq',
      'takes a string, a finite number or a boolean',
    ],
    [{ tags: { $exists: true } }, 'tags.$exists', '$exists applies to metadata.<key> fields only'],
    [{ 'metadata.x': { $exists: 'yes' } }, 'metadata.x.$exists', '$exists takes true or false'],
    [
      { uploaded_at: { $gt: 'last week' } },
      'uploaded_at.$gt',
      'uploaded_at takes an ISO 8601 timestamp',
    ],
    [{ $or: [] }, '$or', 'must be a non-empty array of filters'],
    [{ $or: [{}] }, '$or[0]', 'must not be an empty filter'],
    [{ $and: [{ tags: 'a' }, {}] }, '$and[1]', 'must not be an empty filter'],
    [{ $and: [{ tags: 'a' }, 'b'] }, '$and[1]', 'must be a JSON object'],
    [{ 'metadata.x': {} }, 'metadata.x', 'names no operator'],
  ])('rejects %j at %s: %s', (input, path, reason) => {
    let error: unknown;
    try {
      parseFilter(input);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(FilterError);
    expect((error as FilterError).path).toBe(path);
    expect((error as FilterError).reason).toContain(reason);
  });

  it('bounds nesting depth and the number of conditions', () => {
    let deep: Record<string, unknown> = { tags: 'a' };
    for (let i = 0; i < 7; i++) deep = { $and: [deep] };
    expect(() => parseFilter(deep)).toThrow(/nested deeper than 6 levels/);
    const wide = { $or: Array.from({ length: 65 }, (_, i) => ({ tags: `t${i}` })) };
    expect(() => parseFilter(wide)).toThrow(/more than 64 conditions/);
  });

  it('accepts flat metadata only at upload', () => {
    expect(documentMetadataSchema.safeParse({ a: 'x', n: 1, b: true, l: ['x'] }).success).toBe(
      true,
    );
    expect(documentMetadataSchema.safeParse({ a: { nested: 1 } }).success).toBe(false);
    expect(documentMetadataSchema.safeParse({ 'bad key': 1 }).success).toBe(false);
    expect(documentMetadataSchema.safeParse({ l: [1, 2] }).success).toBe(false);
  });
});
