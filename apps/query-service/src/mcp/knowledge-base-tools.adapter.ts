import { type Access, type Caller, readFilterOf } from '@kb/auth';
import { parseBody } from '@kb/http';
import { KnowledgeBasePort, KnowledgeBaseRestClient } from '@kb/mcp';
import { Inject, Injectable, Logger } from '@nestjs/common';

import { SearchAudit } from '../audit/search-audit.publisher';
import { QUERY_CONFIG, type QueryConfig } from '../config/query.config';
import { ContextService, retrieveContextSchema } from '../context/context.service';
import { searchRequestSchema } from '../search/search.model';
import { SearchService } from '../search/search.service';
import { SearchQuota } from '../search/search-quota';

/**
 * The MCP tools' port for one caller of `/mcp`: searches and context run here, in process, with
 * the caller's read filter and audited as their REST twins are; documents, knowledge bases and
 * stats are read from document-service with the caller's own token, which applies their ACLs.
 */
@Injectable()
export class KnowledgeBaseToolsAdapter {
  private readonly logger = new Logger('McpTools');

  constructor(
    private readonly searches: SearchService,
    private readonly contexts: ContextService,
    private readonly audit: SearchAudit,
    @Inject(QUERY_CONFIG) private readonly config: QueryConfig,
    private readonly quota: SearchQuota,
  ) {}

  portFor(caller: Caller, access: Access): KnowledgeBasePort {
    const documents = new KnowledgeBaseRestClient({
      documentsUrl: this.config.DOCUMENT_SERVICE_URL,
      token: caller.token,
      // The tool answers `unavailable` with a generic message; the detail stays in this log.
      logFailure: (detail) => this.logger.warn(detail),
    });
    return {
      search: async (body) => {
        const request = parseBody(searchRequestSchema, body);
        await this.quota.admit(caller.tenantId, request.knowledgeBaseIds, caller);
        const response = await this.searches.search(caller.tenantId, request, readFilterOf(access));
        this.audit.record(caller.tenantId, caller.userId, 'search', request.query, response.hits, {
          knowledgeBaseIds: request.knowledgeBaseIds,
          reranked: response.rerank === 'applied',
        });
        return response;
      },
      context: async (body) => {
        const request = parseBody(retrieveContextSchema, body);
        await this.quota.admit(caller.tenantId, request.knowledgeBaseIds ?? [], caller);
        const { hits, ...response } = await this.contexts.retrieve(
          caller.tenantId,
          request,
          readFilterOf(access),
        );
        this.audit.record(
          caller.tenantId,
          caller.userId,
          'retrieve_context',
          request.question,
          hits,
          { knowledgeBaseIds: request.knowledgeBaseIds, reranked: response.rerank === 'applied' },
        );
        return response;
      },
      getDocument: (id) => documents.getDocument(id),
      getDocumentText: (id, window) => documents.getDocumentText(id, window),
      listDocuments: (request) => documents.listDocuments(request),
      listKnowledgeBases: () => documents.listKnowledgeBases(),
      stats: () => documents.stats(),
      createSource: (request) => documents.createSource(request),
      syncSource: (id) => documents.syncSource(id),
      getSourceSync: (id, syncId) => documents.getSourceSync(id, syncId),
    };
  }
}
