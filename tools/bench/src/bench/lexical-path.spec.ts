import { lexicalPathsIn, pathsBetween } from './lexical-path';

const METRICS = `# HELP kb_lexical_searches_total BM25 searches by where they ran
# TYPE kb_lexical_searches_total counter
kb_lexical_searches_total{path="memory",service_name="query-service"} 12
kb_lexical_searches_total{path="index",service_name="query-service"} 3
# TYPE kb_lexical_snapshot_build_ms histogram
kb_lexical_snapshot_build_ms_bucket{le="+Inf"} 2
kb_lexical_snapshot_build_ms_sum 16279.4
kb_lexical_snapshot_build_ms_count 2
kb_search_requests_total{mode="hybrid",cache="hit"} 40
`;

describe('lexicalPathsIn', () => {
  it("reads where BM25 ran and the snapshot builds from query-service's metrics", () => {
    expect(lexicalPathsIn(METRICS)).toEqual({ memory: 12, index: 3, builds: 2, build_ms: 16279 });
  });

  it('reads nothing from metrics without the lexical series', () => {
    expect(lexicalPathsIn('kb_search_requests_total{cache="hit"} 4\n')).toEqual({
      memory: 0,
      index: 0,
      builds: 0,
      build_ms: 0,
    });
  });

  it('takes the difference between two readings', () => {
    const before = { memory: 2, index: 1, builds: 1, build_ms: 40 };
    expect(pathsBetween(before, lexicalPathsIn(METRICS))).toEqual({
      memory: 10,
      index: 2,
      builds: 1,
      build_ms: 16239,
    });
  });
});
