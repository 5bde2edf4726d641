import type { Command } from 'commander';

/** `--token`, `KB_TOKEN`, the query-service URL and `--json`, as `kb search` and `kb context` take them. */
export function queryOptions(command: Command): Command {
  return command
    .option('--token <jwt>', 'bearer token (default: KB_TOKEN)', process.env['KB_TOKEN'])
    .option(
      '--query-url <url>',
      'query-service base URL',
      process.env['KB_QUERY_URL'] ?? 'http://127.0.0.1:3005',
    )
    .option('--kb <ids>', 'only these knowledge bases (comma-separated)')
    .option('--mode <mode>', 'hybrid, semantic, lexical or auto', 'hybrid')
    .option('--json', "print the API's answer as one JSON object");
}

export interface QueryFlags {
  token?: string;
  queryUrl: string;
  kb?: string;
  mode: string;
  json?: boolean;
}

export function tokenOf(options: QueryFlags): string {
  if (!options.token) throw new Error('a token is required: --token or KB_TOKEN (see kb token)');
  return options.token;
}

export const knowledgeBasesOf = (options: QueryFlags): { knowledgeBaseIds?: string[] } =>
  options.kb ? { knowledgeBaseIds: options.kb.split(',').map((id) => id.trim()) } : {};

/** One line of text for a terminal: whitespace folded, cut at `max` characters. */
export function snippet(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
