import type { TenantId } from '@kb/contracts';
import { parseBody, Tenant } from '@kb/http';
import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { searchRequestSchema, type SearchResponse } from './search.model';
import { SearchService } from './search.service';

@Controller('v1/search')
export class SearchController {
  constructor(private readonly search: SearchService) {}

  @Post()
  @HttpCode(200)
  run(@Tenant() tenantId: TenantId, @Body() body: unknown): Promise<SearchResponse> {
    return this.search.search(tenantId, parseBody(searchRequestSchema, body));
  }
}
