import { type ContextAnswer, type ContextBody, queryServiceClient } from '@kb/api-client';
import type { Command } from 'commander';

import { answerOf } from '../client/rest-call';
import { knowledgeBasesOf, type QueryFlags, queryOptions, snippet, tokenOf } from './query-options';

/** The packed passages, each under its citation number, as an LLM prompt would quote them. */
export function formatContext(answer: ContextAnswer): string {
  const head = `${answer.passages.length} passages, ${answer.tokensUsed} of ${answer.tokenBudget} tokens${answer.truncated ? ' (truncated)' : ''}${answer.degraded ? ', degraded' : ''}\n`;
  const blocks = answer.passages.map(
    (p) =>
      `\n[${p.citation}] ${p.title || '(untitled)'}  [${p.documentId}]\n   ${snippet(p.text, 400)}\n`,
  );
  return head + blocks.join('');
}

/** `kb context "<question>"`: query-service's `POST /v1/context`, passages packed to a budget. */
export function registerContextCommand(program: Command): void {
  queryOptions(
    program
      .command('context')
      .description(
        'Passages with citations for a question, packed to a token budget (POST /v1/context of query-service).',
      )
      .argument('<question...>', 'the question')
      .option('--budget <tokens>', 'token budget', (v) => Number.parseInt(v, 10)),
  ).action(async (words: string[], options: QueryFlags & { budget?: number }) => {
    const client = queryServiceClient({ baseUrl: options.queryUrl, token: tokenOf(options) });
    const answer = await answerOf(
      client.POST('/v1/context', {
        body: {
          question: words.join(' '),
          // Checked by the service (400 with the allowed modes).
          mode: options.mode as ContextBody['mode'],
          ...(options.budget === undefined ? {} : { tokenBudget: options.budget }),
          ...knowledgeBasesOf(options),
        },
      }),
    );
    process.stdout.write(options.json ? `${JSON.stringify(answer)}\n` : formatContext(answer));
  });
}
