import { searchQueryOf } from './search.controller';
import { searchRequestSchema } from './search.model';

describe('GET /v1/search query string', () => {
  it('maps q, limit, offset, mode and kb (repeated or comma-separated) onto the search body', () => {
    const body = searchQueryOf({
      q: 'comet tails',
      limit: '5',
      offset: '10',
      mode: 'auto',
      kb: ['a,b', 'c'],
    });
    expect(searchRequestSchema.parse(body)).toMatchObject({
      query: 'comet tails',
      topK: 5,
      offset: 10,
      mode: 'auto',
      knowledgeBaseIds: ['a', 'b', 'c'],
    });
  });

  it('keeps the defaults, and refuses what the body would refuse', () => {
    expect(searchRequestSchema.parse(searchQueryOf({ q: 'x' }))).toMatchObject({
      topK: 10,
      offset: 0,
    });
    expect(searchRequestSchema.safeParse(searchQueryOf({})).success).toBe(false);
    expect(searchRequestSchema.safeParse(searchQueryOf({ q: 'x', limit: 'ten' })).success).toBe(
      false,
    );
  });
});
