import type { Access, Caller } from '@kb/auth';
import {
  ApiOperation,
  Authenticated,
  CurrentAccess,
  CurrentCaller,
  parseBody,
  pathParameter,
  queryParameters,
} from '@kb/http';
import { Body, Controller, Get, HttpCode, Param, ParseUUIDPipe, Post, Query } from '@nestjs/common';
import { z } from 'zod';

import {
  holdListQuerySchema,
  holdListSchema,
  type HoldView,
  holdViewSchema,
  placeHoldSchema,
  releaseHoldSchema,
} from './legal-hold.model';
import { LegalHoldsService } from './legal-holds.service';

const holdIdParameter = pathParameter('id', z.uuid(), 'The hold id.');

/**
 * Legal holds, tenant admins only (docs/adr/0052). A hold is released with
 * `POST /v1/holds/{id}/release`, not `DELETE`: it is never removed from the register (who
 * released it, when and why stay readable), and a release carries a reason in its body.
 */
@Controller('v1/holds')
export class LegalHoldsController {
  constructor(private readonly holds: LegalHoldsService) {}

  @Post()
  @ApiOperation({
    operationId: 'placeHold',
    summary:
      'Place a named legal hold on a knowledge base, a set of document ids or a listing filter (`where`); held documents cannot be deleted by anyone or anything; tenant admins only',
    body: placeHoldSchema,
    status: 201,
    response: holdViewSchema,
    errors: [403, 404],
  })
  @Authenticated({ access: true, rateLimit: 'admin' })
  async place(
    @CurrentCaller() caller: Caller,
    @CurrentAccess() access: Access,
    @Body() body: unknown,
  ): Promise<HoldView> {
    return this.holds.place(caller.tenantId, access, parseBody(placeHoldSchema, body));
  }

  @Get()
  @ApiOperation({
    operationId: 'listHolds',
    summary: 'The tenant\u2019s legal holds, newest first (active by default); tenant admins only',
    parameters: queryParameters(holdListQuerySchema),
    response: holdListSchema,
    errors: [403],
  })
  @Authenticated({ access: true })
  async list(
    @CurrentCaller() caller: Caller,
    @CurrentAccess() access: Access,
    @Query() query: Record<string, unknown>,
  ): Promise<{ items: HoldView[] }> {
    const items = await this.holds.list(
      caller.tenantId,
      access,
      parseBody(holdListQuerySchema, query),
    );
    return { items };
  }

  @Get(':id')
  @ApiOperation({
    operationId: 'getHold',
    summary: 'One legal hold; an active one with the number of documents it holds now',
    parameters: [holdIdParameter],
    response: holdViewSchema,
    errors: [403, 404],
  })
  @Authenticated({ access: true })
  async get(
    @CurrentCaller() caller: Caller,
    @CurrentAccess() access: Access,
    @Param('id', new ParseUUIDPipe()) id: string,
  ): Promise<HoldView> {
    return this.holds.get(caller.tenantId, access, id);
  }

  @Post(':id/release')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'releaseHold',
    summary:
      'Release a legal hold (final; it stays listed as released, with who released it and why); tenant admins only',
    parameters: [holdIdParameter],
    body: releaseHoldSchema,
    response: holdViewSchema,
    errors: [403, 404, 409],
  })
  @Authenticated({ access: true, rateLimit: 'admin' })
  async release(
    @CurrentCaller() caller: Caller,
    @CurrentAccess() access: Access,
    @Param('id', new ParseUUIDPipe()) id: string,
    @Body() body: unknown,
  ): Promise<HoldView> {
    const { reason } = parseBody(releaseHoldSchema, body ?? {});
    return this.holds.release(caller.tenantId, access, id, reason);
  }
}
