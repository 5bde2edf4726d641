import type { z } from 'zod';

import { RequestError, RequestErrorCode } from './request.errors';

/**
 * Validates a request at the edge (a REST body or query, a gRPC message); the message names every
 * bad field. Failures are invalid_argument: 400 over REST, INVALID_ARGUMENT over gRPC.
 */
export function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.infer<S> {
  const result = schema.safeParse(body);
  if (!result.success) {
    const problems = result.error.issues.map(
      (issue) => `${issue.path.join('.') || 'body'}: ${issue.message}`,
    );
    throw new RequestError(RequestErrorCode.InvalidArgument, problems.join('; '), { problems });
  }
  return result.data;
}
