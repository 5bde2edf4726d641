import type { Command } from 'commander';

import type { RestEndpoint } from '../collections/collections.command';

/** `--token`, `KB_TOKEN`, and the document-service URL, as every REST command takes them. */
export function restOptions(command: Command): Command {
  return command
    .option('--token <jwt>', 'bearer token (default: KB_TOKEN)', process.env['KB_TOKEN'])
    .option(
      '--documents-url <url>',
      'document-service base URL',
      process.env['KB_DOCUMENTS_URL'] ?? 'http://127.0.0.1:3001',
    )
    .option('--json', 'print the result as one JSON object');
}

export interface RestFlags {
  token?: string;
  documentsUrl: string;
  json?: boolean;
}

export function endpointOf(options: RestFlags): RestEndpoint {
  if (!options.token) throw new Error('a token is required: --token or KB_TOKEN (see kb token)');
  return { documentsUrl: options.documentsUrl, token: options.token };
}

/** The API's answer as one JSON line with `--json`, else the text for a terminal. */
export const printResult = (options: RestFlags, value: unknown, text: () => string): void => {
  process.stdout.write(options.json ? `${JSON.stringify(value)}\n` : text());
};
