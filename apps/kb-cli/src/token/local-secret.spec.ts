import { mkdtemp, readFile, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { TokenVerifier } from '@kb/auth';

import { runCommand } from '../testing/run-command';
import { localJwtSecret } from './local-secret';
import { registerTokenCommand } from './token.command';

describe('kb token', () => {
  const saved = { ...process.env };
  afterEach(() => {
    process.env = { ...saved };
  });

  it('prefers AUTH_JWT_SECRET when it is set', () => {
    expect(localJwtSecret({ AUTH_JWT_SECRET: 's3cret', KB_HOME: '/nowhere' })).toBe('s3cret');
  });

  it('reads $KB_HOME/auth/jwt-secret without env.sh, and creates it (owner-only) as env.sh would', async () => {
    const home = await mkdtemp(join(tmpdir(), 'kb-home-'));
    const first = localJwtSecret({ KB_HOME: home });
    const file = join(home, 'auth', 'jwt-secret');
    expect(await readFile(file, 'utf8')).toBe(first);
    expect(Buffer.from(first, 'base64')).toHaveLength(48);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(localJwtSecret({ KB_HOME: home })).toBe(first);
  });

  it('mints a token the services verify with the same secret', async () => {
    const home = await mkdtemp(join(tmpdir(), 'kb-home-'));
    delete process.env['AUTH_JWT_SECRET'];
    process.env['KB_HOME'] = home;
    const { stdout } = await runCommand(registerTokenCommand, [
      'token',
      '--tenant',
      'acme',
      '--user',
      'alice',
      '--roles',
      'editor, admin',
    ]);
    const verifier = new TokenVerifier({ secret: localJwtSecret({ KB_HOME: home }) });
    const caller = await verifier.verify(stdout.trim());
    expect(caller).toMatchObject({ tenantId: 'acme', userId: 'alice', roles: ['editor', 'admin'] });
  });
});
