import { AccessResolver, type Caller } from '@kb/auth';
import { accessOf, CurrentCaller, parseBody } from '@kb/http';
import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { SearchAudit } from '../audit/search-audit';
import { searchRequestSchema, type SearchResponse } from './search.model';
import { SearchService } from './search.service';

@Controller('v1/search')
export class SearchController {
  constructor(
    private readonly search: SearchService,
    private readonly access: AccessResolver,
    private readonly audit: SearchAudit,
  ) {}

  /** Searches the documents the caller may read (all of the tenant's for an admin). */
  @Post()
  @HttpCode(200)
  async run(@CurrentCaller() caller: Caller, @Body() body: unknown): Promise<SearchResponse> {
    const request = parseBody(searchRequestSchema, body);
    const access = await accessOf(this.access, caller);
    const response = await this.search.search(
      caller.tenantId,
      request,
      access.isAdmin ? undefined : access.principals,
    );
    this.audit.record(caller.tenantId, caller.userId, 'search', request.query, response.hits);
    return response;
  }
}
