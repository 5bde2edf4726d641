import { z } from 'zod';

/** One REST operation as the OpenAPI document describes it; schemas are the ones that validate. */
export interface OpenApiOperation {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  /** OpenAPI path template, e.g. `/v1/documents/{id}`. */
  path: string;
  operationId: string;
  summary: string;
  /** JSON request body, validated by this schema. */
  body?: z.ZodType;
  /**
   * A `multipart/form-data` body instead (or as well, with `body`: either media type): its text parts (`fields`, a zod object) and its binary
   * parts (`files`, required ones named in `requiredFiles`).
   */
  multipart?: { fields: z.ZodType; files: string[]; requiredFiles?: string[] };
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
  /** The success body's media type when it is not JSON (a file: application/octet-stream). */
  responseMediaType?: string;
  /** Other success statuses, e.g. 206 for a byte range, with the same body. */
  alsoStatuses?: number[];
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

/** A multipart body: the fields' schema with one binary property per file part. */
function multipartBody(multipart: NonNullable<OpenApiOperation['multipart']>) {
  const fields = jsonSchema(multipart.fields, 'input') as {
    properties?: Record<string, unknown>;
    required?: string[];
  };
  const required = [...(fields.required ?? []), ...(multipart.requiredFiles ?? [])];
  return {
    required: true,
    content: {
      'multipart/form-data': {
        schema: {
          type: 'object',
          properties: {
            ...fields.properties,
            ...Object.fromEntries(
              multipart.files.map((name) => [name, { type: 'string', format: 'binary' }]),
            ),
          },
          ...(required.length ? { required } : {}),
        },
      },
    },
  };
}

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
      ...new Set([
        400,
        ...(authenticated ? [401] : []),
        // Every body is read under the service's size limit: past it, 413 payload_too_large.
        ...(op.body || op.multipart ? [413] : []),
        ...(op.errors ?? []),
        503,
      ]),
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
        // Both: the operation takes either media type (e.g. an upload as a file or as JSON text).
        ...(op.multipart
          ? {
              requestBody: op.body
                ? {
                    required: true,
                    content: {
                      ...multipartBody(op.multipart).content,
                      'application/json': { schema: jsonSchema(op.body, 'input') },
                    },
                  }
                : multipartBody(op.multipart),
            }
          : {}),
        responses: {
          ...Object.fromEntries(
            [op.status, ...(op.alsoStatuses ?? [])].map((status) => [
              status,
              {
                description: 'Success',
                content: {
                  [op.responseMediaType ?? 'application/json']: {
                    schema: jsonSchema(op.response, 'output'),
                  },
                },
              },
            ]),
          ),
          ...Object.fromEntries(
            errors.map((status) => [
              status,
              {
                description: `Error (${status})`,
                content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
              },
            ]),
          ),
          // A query string can be longer than Node's limit on the request line and headers (16 KiB
          // by default, percent-encoding included) whatever the parameters' own bounds: Node's
          // HTTP parser then answers 431 itself, before any route, without a body.
          ...(parameters.some((p) => p.in === 'query')
            ? { 431: { description: 'Request line and headers over the server limit (no body)' } }
            : {}),
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

/** `METHOD /path` of every operation in an OpenAPI document built by `buildOpenApiDocument`. */
export function documentedRoutes(document: Record<string, unknown>): string[] {
  const paths = document['paths'] as Record<string, Record<string, unknown>>;
  return Object.entries(paths)
    .flatMap(([path, methods]) => Object.keys(methods).map((m) => `${m.toUpperCase()} ${path}`))
    .sort();
}
