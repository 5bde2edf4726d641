import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

export const json = (value: unknown): CallToolResult => ({
  content: [{ type: 'text', text: JSON.stringify(value) }],
});

/**
 * A refusal is a tool result the model can read (`isError`), with the API's stable code: a
 * document the caller may not read is `document_not_found`, like one that does not exist.
 * Anything without a code is not described (no internals reach the model).
 */
export function failure(error: unknown): CallToolResult {
  const code =
    error instanceof Error && typeof (error as { code?: unknown }).code === 'string'
      ? (error as Error & { code: string }).code
      : undefined;
  const text = code ? `${code}: ${(error as Error).message}` : 'internal_error: the tool failed';
  return { content: [{ type: 'text', text }], isError: true };
}

export const run = async (work: () => Promise<unknown>): Promise<CallToolResult> => {
  try {
    return json(await work());
  } catch (error) {
    return failure(error);
  }
};
