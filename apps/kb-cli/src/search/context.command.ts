import type { Command } from 'commander';

import { restCall } from '../client/rest-call';
import { knowledgeBasesOf, type QueryFlags, queryOptions, snippet, tokenOf } from './query-options';

/** The fields of a `POST /v1/context` answer the terminal view shows. */
export interface ContextAnswer {
  passages: Array<{ citation: number; documentId: string; title: string; text: string }>;
  tokensUsed: number;
  tokenBudget: number;
  truncated: boolean;
  standaloneQuery: string;
  degraded: boolean;
}

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
    const answer = await restCall<ContextAnswer>(
      options.queryUrl,
      tokenOf(options),
      'POST',
      '/v1/context',
      {
        question: words.join(' '),
        mode: options.mode,
        ...(options.budget === undefined ? {} : { tokenBudget: options.budget }),
        ...knowledgeBasesOf(options),
      },
    );
    process.stdout.write(options.json ? `${JSON.stringify(answer)}\n` : formatContext(answer));
  });
}
