import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { exportJWK, exportSPKI, generateKeyPair, type KeyLike, SignJWT } from 'jose';

import { AuthenticationError, bearerToken, mintToken, TokenVerifier } from './tokens';

const SECRET = 'test-secret-of-at-least-thirty-two-characters';

describe('TokenVerifier', () => {
  const verifier = new TokenVerifier({ secret: SECRET });

  it('accepts a minted HS256 token and reads tenant, user, roles and groups', async () => {
    const token = await mintToken(
      { tenant: 't1', user: 'alice', roles: ['editor', 'editor'], groups: ['eng'] },
      SECRET,
    );
    await expect(verifier.verify(token)).resolves.toEqual({
      tenantId: 't1',
      userId: 'alice',
      roles: ['editor'],
      groups: ['eng'],
      token,
    });
  });

  it.each([
    [
      'another secret',
      async () => mintToken({ tenant: 't1', user: 'a' }, `${SECRET}-other`),
      /invalid token/,
    ],
    [
      'expired',
      async () => mintToken({ tenant: 't1', user: 'a' }, SECRET, { ttlSeconds: -10 }),
      /token expired/,
    ],
    [
      'a bad tenant claim',
      async () => mintToken({ tenant: 'T 1', user: 'a' }, SECRET),
      /claim tenant/,
    ],
    ['garbage', async () => 'not.a.token', /malformed header/],
    [
      'no expiry',
      async () =>
        new SignJWT({ tenant: 't1' })
          .setProtectedHeader({ alg: 'HS256' })
          .setSubject('a')
          .sign(new TextEncoder().encode(SECRET)),
      /invalid token/,
    ],
  ])('rejects a token with %s', async (_name, make, reason) => {
    const attempt = verifier.verify(await make());
    await expect(attempt).rejects.toBeInstanceOf(AuthenticationError);
    await expect(attempt).rejects.toThrow(reason);
  });

  it('remembers a verified token until its expiry or maximum age, whichever comes first', async () => {
    const cached = new TokenVerifier({ secret: SECRET, maxTokenAgeSeconds: 3600 });
    const key = new TextEncoder().encode(SECRET);
    const now = Math.floor(Date.now() / 1000);
    const sign = (exp: number) =>
      new SignJWT({ tenant: 't1' })
        .setProtectedHeader({ alg: 'HS256' })
        .setSubject('a')
        .setIssuedAt(now)
        .setExpirationTime(exp)
        .sign(key);
    const shortLived = await sign(now + 60);
    const longLived = await sign(now + 86_400);
    const first = await cached.verify(shortLived);
    // The second answer is the remembered one, not a new verification.
    expect(await cached.verify(shortLived)).toBe(first);
    await cached.verify(longLived);
    // Only the clock is faked (Date), not the timers the verification's promises need.
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask', 'setTimeout'] });
    try {
      jest.setSystemTime((now + 61) * 1000);
      await expect(cached.verify(shortLived)).rejects.toThrow(/token expired/);
      await expect(cached.verify(longLived)).resolves.toMatchObject({ userId: 'a' });
      jest.setSystemTime((now + 3601) * 1000); // past the maximum age, not the expiry
      await expect(cached.verify(longLived)).rejects.toThrow(/token expired/);
    } finally {
      jest.useRealTimers();
    }
  });

  it('refuses a token issued longer ago than the maximum age, or without an issue time', async () => {
    const hourly = new TokenVerifier({ secret: SECRET, maxTokenAgeSeconds: 3600 });
    const key = new TextEncoder().encode(SECRET);
    const issued = (iat: number | undefined) => {
      let jwt = new SignJWT({ tenant: 't1' })
        .setProtectedHeader({ alg: 'HS256' })
        .setSubject('a')
        .setExpirationTime('365d');
      if (iat !== undefined) jwt = jwt.setIssuedAt(iat);
      return jwt.sign(key);
    };
    const now = Math.floor(Date.now() / 1000);
    await expect(hourly.verify(await issued(now - 60))).resolves.toMatchObject({ userId: 'a' });
    // A year-long expiry does not help a token issued two hours ago.
    await expect(hourly.verify(await issued(now - 7200))).rejects.toThrow(/token expired/);
    await expect(hourly.verify(await issued(undefined))).rejects.toThrow(/invalid token/);
  });

  it('checks issuer and audience when configured', async () => {
    const strict = new TokenVerifier({ secret: SECRET, issuer: 'kb', audience: 'kb-api' });
    const good = await mintToken({ tenant: 't1', user: 'a' }, SECRET, {
      issuer: 'kb',
      audience: 'kb-api',
    });
    await expect(strict.verify(good)).resolves.toMatchObject({ userId: 'a' });
    const wrong = await mintToken({ tenant: 't1', user: 'a' }, SECRET, {
      issuer: 'other',
      audience: 'kb-api',
    });
    await expect(strict.verify(wrong)).rejects.toThrow(/invalid token/);
  });

  describe('RS256 with a JWKS URL', () => {
    let server: Server;
    let url: string;
    let privateKey: KeyLike;

    beforeAll(async () => {
      const pair = await generateKeyPair('RS256');
      privateKey = pair.privateKey;
      const jwk = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
      server = createServer((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ keys: [jwk] }));
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks.json`;
    });
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

    const signed = (claims: { iss?: string; aud?: string; iat?: boolean } = {}) => {
      let jwt = new SignJWT({ tenant: 't2', roles: ['viewer'] })
        .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
        .setSubject('bob')
        .setIssuer(claims.iss ?? 'https://login.example.com/')
        .setAudience(claims.aud ?? 'knowledge-base')
        .setExpirationTime('5m');
      if (claims.iat !== false) jwt = jwt.setIssuedAt();
      return jwt.sign(privateKey);
    };
    const verifier = () =>
      new TokenVerifier({
        jwksUrl: url,
        issuer: 'https://login.example.com/',
        audience: 'knowledge-base',
      });

    it('refuses a JWKS without issuer and audience: any token of the provider would pass', () => {
      expect(() => new TokenVerifier({ jwksUrl: url })).toThrow(/AUTH_ISSUER and AUTH_AUDIENCE/);
      expect(() => new TokenVerifier({ jwksUrl: url, issuer: 'x' })).toThrow(/AUTH_AUDIENCE/);
    });

    it('refuses a token the provider signed for another application or issuer', async () => {
      const rs = verifier();
      await expect(rs.verify(await signed({ aud: 'payroll' }))).rejects.toThrow(/invalid token/);
      await expect(rs.verify(await signed({ iss: 'https://evil.example/' }))).rejects.toThrow(
        /invalid token/,
      );
    });

    it('verifies a token signed by a key the JWKS publishes, and refuses HS256 without a secret', async () => {
      const rs = verifier();
      const token = await signed();
      await expect(rs.verify(token)).resolves.toMatchObject({
        tenantId: 't2',
        userId: 'bob',
        roles: ['viewer'],
      });
      const hs = await mintToken({ tenant: 't2', user: 'bob' }, SECRET);
      await expect(rs.verify(hs)).rejects.toThrow(/HS256 are not accepted/);
    });
  });

  describe('a local public key (per-service verification, no minting)', () => {
    const sign = (key: KeyLike, alg: string, tenant = 't1') =>
      new SignJWT({ tenant, roles: ['admin'] })
        .setProtectedHeader({ alg })
        .setSubject('issuer-service')
        .setIssuedAt()
        .setExpirationTime('5m')
        .sign(key);
    const pem = async (alg: 'RS256' | 'ES256') => {
      const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true });
      return { privateKey, spki: await exportSPKI(publicKey) };
    };

    it.each(['RS256', 'ES256'] as const)(
      'verifies %s tokens signed by the private key with the public key alone',
      async (alg) => {
        const { privateKey, spki } = await pem(alg);
        const holder = new TokenVerifier({ publicKey: spki });
        await expect(holder.verify(await sign(privateKey, alg))).resolves.toMatchObject({
          tenantId: 't1',
          userId: 'issuer-service',
          roles: ['admin'],
        });
      },
    );

    it('refuses tokens of another key, HS256 tokens, and the other algorithm', async () => {
      const { spki } = await pem('ES256');
      const other = await pem('ES256');
      const holder = new TokenVerifier({ publicKey: spki });
      await expect(holder.verify(await sign(other.privateKey, 'ES256'))).rejects.toBeInstanceOf(
        AuthenticationError,
      );
      // What a pod holding the shared secret could mint is refused here.
      await expect(
        holder.verify(await mintToken({ tenant: 't1', user: 'x' }, SECRET)),
      ).rejects.toThrow('tokens signed with HS256 are not accepted');
      const rsa = await pem('RS256');
      await expect(holder.verify(await sign(rsa.privateKey, 'RS256'))).rejects.toThrow(
        'tokens signed with RS256 are not accepted',
      );
    });
  });

  it('reads the bearer token of an Authorization header', () => {
    expect(bearerToken('Bearer abc.def.ghi')).toBe('abc.def.ghi');
    expect(bearerToken('bearer  x')).toBe('x');
    expect(bearerToken('Basic abc')).toBeUndefined();
    expect(bearerToken(undefined)).toBeUndefined();
  });
});
