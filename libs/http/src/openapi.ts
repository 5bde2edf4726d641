import { z } from 'zod';

/** One REST operation as the OpenAPI document describes it; schemas are the ones that validate. */
export interface OpenApiOperation {
  method: 'get' | 'post' | 'patch' | 'delete';
  /** OpenAPI path template, e.g. `/v1/documents/{id}`. */
  path: string;
  operationId: string;
  summary: string;
  /** JSON request body, validated by this schema. */
  body?: z.ZodType;
  /** Query or path parameters. */
  parameters?: Array<{
    name: string;
    in: 'query' | 'path';
    schema: z.ZodType;
    description?: string;
  }>;
  /** Success status and body. */
  status: number;
  response: z.ZodType;
  /** Error statuses this operation answers with besides 400 and 503. */
  errors?: number[];
  /** False for operations that need no bearer token (e.g. the tool definition). */
  authenticated?: boolean;
}

const errorBodySchema = z.object({
  error: z.object({
    code: z.string().describe('Stable, machine-readable error code, e.g. invalid_argument.'),
    message: z.string(),
    details: z.unknown().optional(),
  }),
});

/** JSON Schema of the wire form: the input side of a request, the output side of a response. */
const jsonSchema = (schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> => {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, {
    io,
    unrepresentable: 'any',
    target: 'openapi-3.0',
  }) as Record<string, unknown>;
  return rest;
};

/**
 * Builds an OpenAPI 3.0 document from the zod schemas the service validates with, so the
 * document cannot drift from what the API accepts and returns.
 */
export function buildOpenApiDocument(
  info: { title: string; version: string; description: string },
  operations: OpenApiOperation[],
  /** The error body, when an API answers errors in another shape (e.g. OpenAI's). */
  options: { errorBody?: z.ZodType } = {},
): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of operations) {
    const parameters = [
      ...(op.parameters ?? []).map((p) => ({
        name: p.name,
        in: p.in,
        required: p.in === 'path' || !p.schema.safeParse(undefined).success,
        schema: jsonSchema(p.schema, 'input'),
        ...(p.description ? { description: p.description } : {}),
      })),
    ];
    const authenticated = op.authenticated !== false;
    const errors = [
      ...new Set([400, ...(authenticated ? [401] : []), ...(op.errors ?? []), 503]),
    ].sort();
    paths[op.path] = {
      ...paths[op.path],
      [op.method]: {
        operationId: op.operationId,
        summary: op.summary,
        security: authenticated ? [{ bearerAuth: [] }] : [],
        ...(parameters.length ? { parameters } : {}),
        ...(op.body
          ? {
              requestBody: {
                required: true,
                content: { 'application/json': { schema: jsonSchema(op.body, 'input') } },
              },
            }
          : {}),
        responses: {
          [op.status]: {
            description: 'Success',
            content: { 'application/json': { schema: jsonSchema(op.response, 'output') } },
          },
          ...Object.fromEntries(
            errors.map((status) => [
              status,
              {
                description: `Error (${status})`,
                content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
              },
            ]),
          ),
        },
      },
    };
  }
  return {
    openapi: '3.0.3',
    info,
    paths,
    components: {
      schemas: { Error: jsonSchema(options.errorBody ?? errorBodySchema, 'output') },
      securitySchemes: {
        // The token names the tenant, the user, their roles and groups (claims tenant, sub, roles, groups).
        bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
      },
    },
  };
}
