import type { Access, Caller } from '@kb/auth';
import {
  ApiOperation,
  Authenticated,
  CurrentAccess,
  CurrentCaller,
  parseBody,
  pathParameter,
} from '@kb/http';
import { Body, Controller, Get, HttpCode, Param, ParseUUIDPipe, Post } from '@nestjs/common';
import { z } from 'zod';

import { type ErasureView, erasureViewSchema, requestErasureSchema } from './erasure.model';
import { ErasuresService } from './erasures.service';

const erasureIdParameter = pathParameter('id', z.uuid(), 'The erasure job id.');

/** Erasure jobs, tenant admins only (docs/adr/0052). */
@Controller('v1/erasures')
export class ErasuresController {
  constructor(private readonly erasures: ErasuresService) {}

  @Post()
  @HttpCode(202)
  @ApiOperation({
    operationId: 'requestErasure',
    summary:
      'Delete everything a user uploaded (uploadedBy) and/or everything a listing filter matches (where), as one audited background job; documents under legal hold are skipped and counted; tenant admins only',
    body: requestErasureSchema,
    status: 202,
    response: erasureViewSchema,
    errors: [403],
  })
  @Authenticated({ access: true, rateLimit: 'admin' })
  async request(
    @CurrentCaller() caller: Caller,
    @CurrentAccess() access: Access,
    @Body() body: unknown,
  ): Promise<ErasureView> {
    return this.erasures.request(caller.tenantId, access, parseBody(requestErasureSchema, body));
  }

  @Get(':id')
  @ApiOperation({
    operationId: 'getErasure',
    summary: 'An erasure job and its progress (deleted so far; held when it ends)',
    parameters: [erasureIdParameter],
    response: erasureViewSchema,
    errors: [403, 404],
  })
  @Authenticated({ access: true })
  async get(
    @CurrentCaller() caller: Caller,
    @CurrentAccess() access: Access,
    @Param('id', new ParseUUIDPipe()) id: string,
  ): Promise<ErasureView> {
    return this.erasures.get(caller.tenantId, access, id);
  }
}
