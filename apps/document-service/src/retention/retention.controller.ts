import type { Access, Caller } from '@kb/auth';
import {
  ApiOperation,
  Authenticated,
  CurrentAccess,
  CurrentCaller,
  parseBody,
  queryParameters,
} from '@kb/http';
import { Controller, Get, Param, Query } from '@nestjs/common';

import { knowledgeBaseIdParameter } from '../knowledge-bases/knowledge-bases.openapi';
import {
  type RetentionPreview,
  retentionPreviewQuerySchema,
  retentionPreviewSchema,
} from './retention.model';
import { RetentionService } from './retention.service';

/** Retention of a knowledge base (docs/adr/0052); the policy itself is set on the knowledge base. */
@Controller('v1/knowledge-bases')
export class RetentionController {
  constructor(private readonly retention: RetentionService) {}

  @Get(':id/retention/preview')
  @ApiOperation({
    operationId: 'previewRetention',
    summary:
      'What retention would delete from a knowledge base now (documents whose expiresAt or retention period has passed) and which of them a legal hold keeps; tenant admins only',
    parameters: [knowledgeBaseIdParameter, ...queryParameters(retentionPreviewQuerySchema)],
    response: retentionPreviewSchema,
    errors: [403, 404],
  })
  @Authenticated({ access: true })
  async preview(
    @CurrentCaller() caller: Caller,
    @CurrentAccess() access: Access,
    @Param('id') id: string,
    @Query() query: unknown,
  ): Promise<RetentionPreview> {
    const { limit } = parseBody(retentionPreviewQuerySchema, query);
    return this.retention.preview(caller.tenantId, access, id, limit);
  }
}
