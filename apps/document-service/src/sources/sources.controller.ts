import type { Access, Caller } from '@kb/auth';
import {
  ApiOperation,
  Authenticated,
  CurrentAccess,
  CurrentCaller,
  parseBody,
  pathParameter,
} from '@kb/http';
import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Param,
  ParseUUIDPipe,
  Post,
  Query,
  Res,
} from '@nestjs/common';
import type { Response } from 'express';
import { z } from 'zod';

import {
  clientSyncReportSchema,
  createSourceSchema,
  type SourceView,
  sourceViewSchema,
  type SyncView,
  syncViewSchema,
} from './source.model';
import { SourcesService } from './sources.service';

const syncHistoryQuerySchema = z
  .object({ limit: z.coerce.number().int().min(1).max(100).default(20) })
  .strict();

/** `wait=false`: answer 202 with the running sync at once; it goes on in the background. */
const syncQuerySchema = z.object({ wait: z.enum(['true', 'false']).default('true') }).strict();

const uuid = new ParseUUIDPipe({ version: '4' });
const sourceId = pathParameter('id', z.uuid());

/** Sources that sync into a knowledge base (docs/adr/0026). */
@Controller('v1/sources')
export class SourcesController {
  constructor(private readonly sources: SourcesService) {}

  @Post()
  @ApiOperation({
    operationId: 'createSource',
    summary:
      'A source bound to a knowledge base: an S3 bucket and prefix (synced by the server) or a folder (synced by kb sync), with include and exclude globs',
    body: createSourceSchema,
    response: sourceViewSchema,
    errors: [403],
  })
  @Authenticated({ access: true })
  async create(
    @CurrentCaller() caller: Caller,
    @CurrentAccess() access: Access,
    @Body() body: unknown,
  ): Promise<SourceView> {
    return this.sources.create(caller.tenantId, access, parseBody(createSourceSchema, body));
  }

  @Get()
  @ApiOperation({
    operationId: 'listSources',
    summary: 'The tenant\u2019s sources',
    response: z.object({ items: z.array(sourceViewSchema) }),
  })
  @Authenticated({ access: true })
  async list(@CurrentCaller() caller: Caller): Promise<{ items: SourceView[] }> {
    return { items: await this.sources.list(caller.tenantId) };
  }

  @Get(':id')
  @ApiOperation({
    operationId: 'getSource',
    summary: 'One source',
    parameters: [sourceId],
    response: sourceViewSchema,
    errors: [404],
  })
  @Authenticated({ access: true })
  get(@CurrentCaller() caller: Caller, @Param('id', uuid) id: string): Promise<SourceView> {
    return this.sources.get(caller.tenantId, id);
  }

  @Delete(':id')
  @ApiOperation({
    operationId: 'deleteSource',
    summary: 'Delete a source and its sync history; the documents it brought stay',
    parameters: [sourceId],
    response: z.object({ sourceId: z.uuid() }),
    errors: [403, 404],
  })
  @Authenticated({ access: true })
  @HttpCode(200)
  delete(
    @CurrentCaller() caller: Caller,
    @CurrentAccess() access: Access,
    @Param('id', uuid) id: string,
  ): Promise<{ sourceId: string }> {
    return this.sources.delete(caller.tenantId, access, id);
  }

  /**
   * Runs a sync now and answers with its record (200): counts, failures, times. With
   * `wait=false`, answers 202 with the running sync and goes on in the background.
   */
  @Post(':id/sync')
  @ApiOperation({
    operationId: 'syncSource',
    summary:
      'Sync an S3 source now: new files uploaded, changed ones a new version, removed ones deleted; answers the finished sync with its counts (200), or with wait=false the running sync at once (202, follow it at /v1/sources/{id}/syncs/{syncId}). One sync per source at a time: 409 sync_in_progress',
    parameters: [sourceId, { name: 'wait', in: 'query', schema: syncQuerySchema.shape.wait }],
    status: 200,
    alsoStatuses: [202],
    response: syncViewSchema,
    errors: [403, 404, 409],
  })
  @Authenticated({ access: true, rateLimit: 'upload' })
  async sync(
    @CurrentCaller() caller: Caller,
    @CurrentAccess() access: Access,
    @Param('id', uuid) id: string,
    @Query() query: unknown,
    @Res({ passthrough: true }) response: Response,
  ): Promise<SyncView> {
    const { wait } = parseBody(syncQuerySchema, query);
    const outcome = await this.sources.sync(caller.tenantId, caller, access, id, wait === 'true');
    response.status(outcome.finished ? 200 : 202);
    return outcome.sync;
  }

  /** One sync: `running` until it has finished, then its counts and failures. */
  @Get(':id/syncs/:syncId')
  @ApiOperation({
    operationId: 'getSourceSync',
    summary: 'One sync of the source: running, or finished with its counts and failures',
    parameters: [sourceId, pathParameter('syncId', z.uuid(), 'The sync id.')],
    response: syncViewSchema,
    errors: [404],
  })
  @Authenticated({ access: true })
  getSync(
    @CurrentCaller() caller: Caller,
    @Param('id', uuid) id: string,
    @Param('syncId', uuid) syncId: string,
  ): Promise<SyncView> {
    return this.sources.getSync(caller.tenantId, id, syncId);
  }

  /** The source's syncs, newest first. */
  @Get(':id/syncs')
  @ApiOperation({
    operationId: 'listSourceSyncs',
    summary: 'The source\u2019s sync history, newest first',
    parameters: [
      sourceId,
      { name: 'limit', in: 'query', schema: syncHistoryQuerySchema.shape.limit },
    ],
    response: z.object({ items: z.array(syncViewSchema) }),
    errors: [404],
  })
  @Authenticated({ access: true })
  history(
    @CurrentCaller() caller: Caller,
    @Param('id', uuid) id: string,
    @Query() query: unknown,
  ): Promise<{ items: SyncView[] }> {
    const { limit } = parseBody(syncHistoryQuerySchema, query);
    return this.sources.history(caller.tenantId, id, limit);
  }

  /** `kb sync --source` opens its sync of a folder source (ADR 43). */
  @Post(':id/syncs')
  @HttpCode(201)
  @ApiOperation({
    operationId: 'openSourceSync',
    summary:
      'Open a sync of a folder source before kb sync uploads it (trigger client): one sync per source at a time (409 sync_in_progress); an S3 source is synced by the server (409 source_not_syncable)',
    parameters: [sourceId],
    status: 201,
    response: syncViewSchema,
    errors: [403, 404, 409],
  })
  @Authenticated({ access: true, rateLimit: 'upload' })
  openSync(
    @CurrentCaller() caller: Caller,
    @CurrentAccess() access: Access,
    @Param('id', uuid) id: string,
  ): Promise<SyncView> {
    return this.sources.openClientSync(caller.tenantId, access, id);
  }

  /** The CLI's report closes the sync and sends `source.synced` to webhooks (ADR 43). */
  @Post(':id/syncs/:syncId/finish')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'finishSourceSync',
    summary:
      'Close a folder source\u2019s sync with what kb sync did (counts, failed files); enqueues source.synced like the server\u2019s syncs. 409 sync_not_running when it was closed meanwhile',
    parameters: [sourceId, pathParameter('syncId', z.uuid(), 'The sync id.')],
    body: clientSyncReportSchema,
    response: syncViewSchema,
    errors: [403, 404, 409],
  })
  @Authenticated({ access: true, rateLimit: 'upload' })
  finishSync(
    @CurrentCaller() caller: Caller,
    @CurrentAccess() access: Access,
    @Param('id', uuid) id: string,
    @Param('syncId', uuid) syncId: string,
    @Body() body: unknown,
  ): Promise<SyncView> {
    return this.sources.finishClientSync(
      caller.tenantId,
      access,
      id,
      syncId,
      parseBody(clientSyncReportSchema, body),
    );
  }
}
