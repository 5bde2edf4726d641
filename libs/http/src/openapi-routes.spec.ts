import { Controller, Delete, Get, HttpCode, Post } from '@nestjs/common';
import { z } from 'zod';

import { ApiOperation, buildRouteDocument, pathParameter, routeOperations } from './openapi-routes';

const thing = z.object({ id: z.string() });
const id = pathParameter('id', z.string(), 'The thing id.');

@Controller('v1/things')
class ThingsController {
  @Post()
  @ApiOperation({ operationId: 'createThing', summary: 'Create', body: thing, response: thing })
  create(): void {}

  @Post(':id/run')
  @HttpCode(200)
  @ApiOperation({ operationId: 'runThing', summary: 'Run', parameters: [id], response: thing })
  run(): void {}

  @Delete(':id')
  @ApiOperation({
    operationId: 'deleteThing',
    summary: 'Delete',
    parameters: [id],
    status: 202,
    response: thing,
  })
  remove(): void {}

  /** Not a route: no method decorator. */
  helper(): void {}
}

describe('operations from the routes', () => {
  it('takes method and path from the route, the status from @HttpCode or Nest’s default', () => {
    expect(
      routeOperations(ThingsController).map(({ method, path, status, operationId }) => ({
        method,
        path,
        status,
        operationId,
      })),
    ).toEqual([
      { method: 'post', path: '/v1/things', status: 201, operationId: 'createThing' },
      { method: 'post', path: '/v1/things/{id}/run', status: 200, operationId: 'runThing' },
      { method: 'delete', path: '/v1/things/{id}', status: 202, operationId: 'deleteThing' },
    ]);
  });

  it('builds the document from them', () => {
    const document = buildRouteDocument({ title: 't', version: '1', description: 'd' }, [
      ThingsController,
    ]);
    const paths = document['paths'] as Record<string, Record<string, { operationId: string }>>;
    expect(paths['/v1/things/{id}']!['delete']!.operationId).toBe('deleteThing');
  });

  it('fails on a route without @ApiOperation', () => {
    @Controller('v1/other')
    class UndocumentedController {
      @Get(':id')
      get(): void {}
    }
    expect(() => routeOperations(UndocumentedController)).toThrow(
      'GET /v1/other/{id} has no @ApiOperation',
    );
  });

  it('fails when the declared path parameters are not the path’s', () => {
    @Controller('v1/other')
    class WrongController {
      @Get(':key')
      @ApiOperation({ operationId: 'get', summary: 'Get', parameters: [id], response: thing })
      get(): void {}
    }
    expect(() => routeOperations(WrongController)).toThrow(
      'GET /v1/other/{key} declares path parameters [id]',
    );
  });
});
