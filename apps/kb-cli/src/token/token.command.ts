import type { Command } from 'commander';

import { localToken } from './local-secret';

const list = (value: string): string[] =>
  value
    .split(',')
    .map((v) => v.trim())
    .filter(Boolean);

/** `kb token`: a local HS256 bearer token, signed with the secret the local services verify. */
export function registerTokenCommand(program: Command): void {
  program
    .command('token')
    .description(
      'Mint a local HS256 bearer token for the REST and gRPC APIs, signed with AUTH_JWT_SECRET or else $KB_HOME/auth/jwt-secret (the secret scripts/infra/env.sh gives the services).',
    )
    .requiredOption('--tenant <id>', 'the tenant the token is for')
    .requiredOption('--user <id>', 'the user (subject)')
    .option('--roles <list>', 'comma-separated roles, e.g. editor,admin', list, [])
    .option('--groups <list>', 'comma-separated groups', list, [])
    .action(
      async (options: { tenant: string; user: string; roles: string[]; groups: string[] }) => {
        const token = await localToken({
          tenant: options.tenant,
          user: options.user,
          roles: options.roles,
          groups: options.groups,
        });
        process.stdout.write(`${token}\n`);
      },
    );
}
