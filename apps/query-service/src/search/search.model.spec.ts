import { chunkKey, normalizeRequest, searchRequestSchema } from './search.model';

describe('searchRequestSchema', () => {
  it('rejects more than five neighbours', () => {
    expect(searchRequestSchema.safeParse({ query: 'q', neighbors: 6 }).success).toBe(false);
  });

  it('rejects a malformed filter with the path and reason', () => {
    const result = searchRequestSchema.safeParse({ query: 'q', filter: { tags: { $regex: 'x' } } });
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]).toMatchObject({
      path: ['filter'],
      message: expect.stringContaining('filter at tags.$regex: unknown operator "$regex"'),
    });
  });

  it('keeps pages within the result window', () => {
    expect(searchRequestSchema.safeParse({ query: 'q', topK: 100, offset: 100 }).success).toBe(
      true,
    );
    expect(searchRequestSchema.safeParse({ query: 'q', topK: 100, offset: 101 }).success).toBe(
      false,
    );
  });
});

describe('normalizeRequest', () => {
  it('folds the spacing of the query and the order of knowledge bases, not the case', () => {
    const parse = (query: string, knowledgeBaseIds: string[]) =>
      normalizeRequest(searchRequestSchema.parse({ query, knowledgeBaseIds }));
    expect(parse(' Sail   Rigging ', ['b', 'a', 'b'])).toEqual(parse('Sail Rigging', ['a', 'b']));
    expect(parse('US exports', [])).not.toEqual(parse('us exports', []));
  });
});

describe('chunkKey', () => {
  it('names a chunk by document, version and index', () => {
    expect(chunkKey({ documentId: 'd1', documentVersion: 2, chunkIndex: 3 })).toBe('d1#2#3');
  });
});
