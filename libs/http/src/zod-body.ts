import type { z } from 'zod';

import { RequestError, RequestErrorCode } from './request.errors';

/**
 * Validates a request at the edge (a REST body or query, a gRPC message); the message names every
 * bad field. Failures are invalid_argument: 400 over REST, INVALID_ARGUMENT over gRPC.
 */
export function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.infer<S> {
  const nul = pathOfNul(body, []);
  if (nul !== undefined) {
    // PostgreSQL text cannot hold U+0000, and no document field or query needs it: refuse it here
    // rather than fail (500) wherever the value is first stored.
    const problem = `${nul || 'body'}: must not contain the NUL character (U+0000)`;
    throw new RequestError(RequestErrorCode.InvalidArgument, problem, { problems: [problem] });
  }
  const result = schema.safeParse(body);
  if (!result.success) {
    const problems = result.error.issues.map(
      (issue) => `${issue.path.join('.') || 'body'}: ${issue.message}`,
    );
    throw new RequestError(RequestErrorCode.InvalidArgument, problems.join('; '), { problems });
  }
  return result.data;
}

/** The dotted path of the first string (value or key) holding U+0000, or undefined. */
function pathOfNul(value: unknown, path: Array<string | number>): string | undefined {
  if (typeof value === 'string') return value.includes('\u0000') ? path.join('.') : undefined;
  if (typeof value !== 'object' || value === null) return undefined;
  for (const [key, child] of Object.entries(value)) {
    const at = [...path, Array.isArray(value) ? Number(key) : key];
    if (key.includes('\u0000')) return at.join('.');
    const found = pathOfNul(child, at);
    if (found !== undefined) return found;
  }
  return undefined;
}
