import { outcomeOf } from './fuzz.command';

describe('kb-tools fuzz', () => {
  it('counts ST101 failures as server errors and the rest as schema violations', () => {
    expect(
      outcomeOf({
        failures: [
          { code: 'ST101', count: 2 },
          { code: 'ST301', count: 3 },
          { code: 'ST401', count: 1 },
        ],
        operations: { tested: 12 },
        test_cases: { generated: 700 },
        errors: [{}],
      }),
    ).toEqual({
      operations: 12,
      test_cases: 700,
      server_errors: 2,
      schema_violations: 4,
      errors: 1,
    });
  });
});
