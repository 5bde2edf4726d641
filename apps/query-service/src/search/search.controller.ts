import { type Access, type Caller, readFilterOf } from '@kb/auth';
import { Authenticated, CurrentAccess, CurrentCaller, parseBody } from '@kb/http';
import { Body, Controller, HttpCode, Post } from '@nestjs/common';

import { SearchAudit } from '../audit/search-audit.publisher';
import { searchRequestSchema, type SearchResponse } from './search.model';
import { SearchService } from './search.service';

@Controller('v1/search')
export class SearchController {
  constructor(
    private readonly search: SearchService,
    private readonly audit: SearchAudit,
  ) {}

  /** Searches the documents the caller may read (all of the tenant's for an admin). */
  @Post()
  @HttpCode(200)
  @Authenticated({ access: true })
  async run(
    @CurrentCaller() caller: Caller,
    @CurrentAccess() access: Access,
    @Body() body: unknown,
  ): Promise<SearchResponse> {
    const request = parseBody(searchRequestSchema, body);
    const response = await this.search.search(
      caller.tenantId,
      request,
      readFilterOf(access),
      caller,
    );
    this.audit.record(caller.tenantId, caller.userId, 'search', request.query, response.hits);
    return response;
  }
}
