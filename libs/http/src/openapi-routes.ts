import { RequestMethod, SetMetadata } from '@nestjs/common';
import { HTTP_CODE_METADATA, METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import type { z } from 'zod';

import { buildOpenApiDocument, type OpenApiOperation } from './openapi';

/**
 * What `@ApiOperation` says about a route. Its method and path are the route's own (`@Get`,
 * `@Controller`); its success status is `@HttpCode`'s, else Nest's default (201 for POST, 200
 * otherwise), unless `status` names another (a handler that sets it itself).
 */
export type RouteOperation = Omit<OpenApiOperation, 'method' | 'path' | 'status'> & {
  status?: number;
};

const API_OPERATION = 'kb:api-operation';

/** Documents a route in its service's OpenAPI document; a route without it fails the build. */
export const ApiOperation = (operation: RouteOperation): MethodDecorator =>
  SetMetadata(API_OPERATION, operation);

/** A path parameter of an operation. */
export const pathParameter = (name: string, schema: z.ZodType, description?: string) => ({
  name,
  in: 'path' as const,
  schema,
  ...(description ? { description } : {}),
});

/** One query parameter per property of a zod object, in its order. */
export const queryParameters = (schema: z.ZodObject) =>
  Object.entries(schema.shape).map(([name, value]) => ({
    name,
    in: 'query' as const,
    schema: value as z.ZodType,
  }));

type ControllerClass = abstract new (...args: never[]) => unknown;

interface Route {
  method: RequestMethod;
  /** OpenAPI path template: `:param` written `{param}`. */
  path: string;
  handler: object;
}

/** Every route the controllers declare, from Nest's own route metadata (no app needed). */
function routesOf(controllers: ControllerClass[]): Route[] {
  const routes: Route[] = [];
  for (const controller of controllers) {
    const base = String(Reflect.getMetadata(PATH_METADATA, controller) ?? '');
    const prototype = controller.prototype as Record<string, unknown>;
    for (const key of Object.getOwnPropertyNames(prototype)) {
      const handler = prototype[key];
      if (key === 'constructor' || typeof handler !== 'function') continue;
      const method = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined;
      if (method === undefined) continue;
      const path = String(Reflect.getMetadata(PATH_METADATA, handler) ?? '');
      const full = `/${[base, path]
        .map((p) => p.replace(/^\/+|\/+$/g, ''))
        .filter(Boolean)
        .join('/')}`;
      routes.push({ method, path: full.replace(/:(\w+)/g, '{$1}'), handler });
    }
  }
  return routes;
}

/**
 * The operations of the controllers' routes, each from its `@ApiOperation`. Throws on a route
 * without one, or whose path parameters and declared ones differ: the document cannot drift.
 */
export function routeOperations(...controllers: ControllerClass[]): OpenApiOperation[] {
  return routesOf(controllers).map(({ method, path, handler }) => {
    const route = `${RequestMethod[method]} ${path}`;
    const operation = Reflect.getMetadata(API_OPERATION, handler) as RouteOperation | undefined;
    if (!operation) throw new Error(`${route} has no @ApiOperation`);
    const inPath = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
    const declared = (operation.parameters ?? [])
      .filter((p) => p.in === 'path')
      .map((p) => p.name)
      .sort();
    if (inPath.join() !== declared.join()) {
      throw new Error(`${route} declares path parameters [${declared.join(', ')}]`);
    }
    const status =
      operation.status ??
      (Reflect.getMetadata(HTTP_CODE_METADATA, handler) as number | undefined) ??
      (method === RequestMethod.POST ? 201 : 200);
    return {
      ...operation,
      method: RequestMethod[method].toLowerCase() as OpenApiOperation['method'],
      path,
      status,
    };
  });
}

/** A service's OpenAPI document, built from its controllers' routes and their `@ApiOperation`s. */
export function buildRouteDocument(
  info: Parameters<typeof buildOpenApiDocument>[0],
  controllers: ControllerClass[],
  options?: Parameters<typeof buildOpenApiDocument>[2],
): Record<string, unknown> {
  return buildOpenApiDocument(info, routeOperations(...controllers), options);
}

/**
 * `METHOD /path` of every route the controllers declare, with `:param` written `{param}` as in
 * OpenAPI.
 */
export function controllerRoutes(...controllers: ControllerClass[]): string[] {
  return routesOf(controllers)
    .map(({ method, path }) => `${RequestMethod[method]} ${path}`)
    .sort();
}
