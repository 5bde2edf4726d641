import type { z } from 'zod';
import { ApiError } from './api-error';

/** Validates a request body at the edge; the message names every bad field. */
export function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.infer<S> {
  const result = schema.safeParse(body);
  if (!result.success) {
    const problems = result.error.issues.map(
      (issue) => `${issue.path.join('.') || 'body'}: ${issue.message}`,
    );
    throw new ApiError(400, 'invalid_argument', problems.join('; '), { problems });
  }
  return result.data;
}
