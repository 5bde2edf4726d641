import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

import { mintToken, type TokenClaims } from '@kb/auth';

/** `$KB_HOME` as scripts/infra/env.sh sets it: the local servers' data, logs and secrets. */
export function kbHome(env: NodeJS.ProcessEnv = process.env): string {
  return env['KB_HOME'] || join(homedir(), '.cache', 'kb');
}

/**
 * The local HS256 signing secret the services verify bearer tokens with: `AUTH_JWT_SECRET` when
 * set, else `$KB_HOME/auth/jwt-secret`, generated on first use exactly as scripts/infra/env.sh
 * does (48 random bytes, base64, readable by the owner only). So `kb token` works in a new shell.
 */
export function localJwtSecret(env: NodeJS.ProcessEnv = process.env): string {
  const fromEnv = env['AUTH_JWT_SECRET'];
  if (fromEnv) return fromEnv;
  const file = join(kbHome(env), 'auth', 'jwt-secret');
  try {
    const secret = readFileSync(file, 'utf8').trim();
    if (secret) return secret;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const secret = randomBytes(48).toString('base64');
  writeFileSync(file, secret, { mode: 0o600 });
  return secret;
}

/** A bearer token signed with the local secret (six hours), for `kb token` and the tools. */
export function localToken(
  claims: TokenClaims,
  env: NodeJS.ProcessEnv = process.env,
): Promise<string> {
  return mintToken(claims, localJwtSecret(env), { ttlSeconds: 6 * 3600 });
}
