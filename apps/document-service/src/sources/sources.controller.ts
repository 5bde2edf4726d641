import type { Access, Caller } from '@kb/auth';
import { Authenticated, CurrentAccess, CurrentCaller, parseBody } from '@kb/http';
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

import { createSourceSchema, type SourceView, type SyncView } from './source.model';
import { SourcesService } from './sources.service';

export const syncHistoryQuerySchema = z
  .object({ limit: z.coerce.number().int().min(1).max(100).default(20) })
  .strict();

/** `wait=false`: answer 202 with the running sync at once; it goes on in the background. */
export const syncQuerySchema = z
  .object({ wait: z.enum(['true', 'false']).default('true') })
  .strict();

const uuid = new ParseUUIDPipe({ version: '4' });

/** Sources that sync into a knowledge base (docs/adr/0026). */
@Controller('v1/sources')
export class SourcesController {
  constructor(private readonly sources: SourcesService) {}

  @Post()
  @Authenticated({ access: true })
  async create(
    @CurrentCaller() caller: Caller,
    @CurrentAccess() access: Access,
    @Body() body: unknown,
  ): Promise<SourceView> {
    return this.sources.create(caller.tenantId, access, parseBody(createSourceSchema, body));
  }

  @Get()
  @Authenticated({ access: true })
  async list(@CurrentCaller() caller: Caller): Promise<{ items: SourceView[] }> {
    return { items: await this.sources.list(caller.tenantId) };
  }

  @Get(':id')
  @Authenticated({ access: true })
  get(@CurrentCaller() caller: Caller, @Param('id', uuid) id: string): Promise<SourceView> {
    return this.sources.get(caller.tenantId, id);
  }

  @Delete(':id')
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
  @Authenticated({ access: true })
  history(
    @CurrentCaller() caller: Caller,
    @Param('id', uuid) id: string,
    @Query() query: unknown,
  ): Promise<{ items: SyncView[] }> {
    const { limit } = parseBody(syncHistoryQuerySchema, query);
    return this.sources.history(caller.tenantId, id, limit);
  }
}
