import { queryServiceClient, type SearchAnswer, type SearchBody } from '@kb/api-client';
import type { Command } from 'commander';

import { answerOf } from '../client/rest-call';
import { knowledgeBasesOf, type QueryFlags, queryOptions, snippet, tokenOf } from './query-options';

/** Ranked hits, one block each: rank, score, title, document and chunk, then a line of text. */
export function formatSearch(answer: SearchAnswer): string {
  const total = `${answer.totalRelation === 'gte' ? '≥' : ''}${answer.total}`;
  const head = `${answer.hits.length} of ${total} hits (${answer.mode}, ${Math.round(answer.tookMs)} ms${answer.degraded ? ', degraded' : ''})\n`;
  const blocks = answer.hits.map((hit, i) => {
    const where = `${hit.filename ?? hit.documentId} #${hit.chunkIndex}`;
    const rank = hit.isMatch ? `${i + 1}.` : ' +';
    return `\n${rank} ${hit.score.toFixed(3)}  ${hit.title || '(untitled)'}  [${where}]\n   ${snippet(hit.text, 200)}\n`;
  });
  return head + blocks.join('');
}

/** `kb search "<query>"`: query-service's `POST /v1/search` as the caller of the token. */
export function registerSearchCommand(program: Command): void {
  queryOptions(
    program
      .command('search')
      .description('Search the documents you may read (POST /v1/search of query-service).')
      .argument('<query...>', 'what to look for, in natural language')
      .option('--limit <n>', 'hits to show', (v) => Number.parseInt(v, 10), 10),
  ).action(async (words: string[], options: QueryFlags & { limit: number }) => {
    const client = queryServiceClient({ baseUrl: options.queryUrl, token: tokenOf(options) });
    const answer = await answerOf(
      client.POST('/v1/search', {
        body: {
          query: words.join(' '),
          topK: options.limit,
          // Checked by the service (400 with the allowed modes).
          mode: options.mode as SearchBody['mode'],
          ...knowledgeBasesOf(options),
        },
      }),
    );
    process.stdout.write(options.json ? `${JSON.stringify(answer)}\n` : formatSearch(answer));
  });
}
