import { createPublicKey, type KeyObject } from 'node:crypto';

import { isTenantId } from '@kb/contracts';
import {
  createRemoteJWKSet,
  errors,
  type JWTPayload,
  jwtVerify,
  type JWTVerifyGetKey,
  SignJWT,
} from 'jose';
import { LRUCache } from 'lru-cache';
import { z } from 'zod';

import { AuthError, AuthErrorCode } from './auth.errors';
import type { Caller } from './caller';

export interface TokenVerifierOptions {
  /** HS256 shared secret (local and test use). */
  secret?: string | undefined;
  /** RS256 keys from a JWKS endpoint (production). */
  jwksUrl?: string | undefined;
  /**
   * A public key (PEM, SPKI) to verify RS256 (RSA key) or ES256 (P-256 key) tokens with. A
   * service holding only this can verify tokens but mint none, unlike with the shared secret.
   */
  publicKey?: string | undefined;
  /** Required with `jwksUrl`: an identity provider signs tokens for other applications too. */
  issuer?: string | undefined;
  audience?: string | undefined;
  /** Tokens issued longer ago than this are refused whatever their expiry (`iat` is required). */
  maxTokenAgeSeconds?: number | undefined;
}

/** A day: a token is re-issued at least daily, so a leaked one is not good for long. */
export const DEFAULT_MAX_TOKEN_AGE_SECONDS = 86_400;

/** The claims this service reads; a token without them is rejected. */
const claimsSchema = z.object({
  sub: z.string().min(1).max(256),
  tenant: z.string().refine(isTenantId, 'tenant must be lower-case letters, digits, "-" or "_"'),
  roles: z.array(z.string().min(1).max(128)).max(64).default([]),
  groups: z.array(z.string().min(1).max(128)).max(256).default([]),
});

/** A token that cannot be accepted; `reason` is safe to show the caller. */
export class AuthenticationError extends AuthError {
  constructor(readonly reason: string) {
    super(AuthErrorCode.Unauthenticated, reason);
  }
}

/** Verified tokens remembered at most (least recently used dropped first). */
const VERIFIED_CACHE_SIZE = 10_000;

/**
 * Verifies bearer tokens: HS256 with a shared secret, RS256 with keys from a JWKS URL (fetched and
 * cached by jose, refreshed on an unknown key id), or both. Expiry and age (`iat` within
 * `maxTokenAgeSeconds`) are always checked; issuer and audience when configured, and always with
 * a JWKS.
 */
export class TokenVerifier {
  /**
   * Tokens already verified, with the caller and the moment they stop being valid (expiry or
   * maximum age, whichever is first): a repeated token skips the signature check and the claim
   * parsing (docs/adr/0029). Keyed by the whole token, so only the very bytes verified match.
   */
  private readonly verified = new LRUCache<string, { caller: Caller; validUntilMs: number }>({
    max: VERIFIED_CACHE_SIZE,
  });
  private readonly secret?: Uint8Array;
  private readonly jwks?: JWTVerifyGetKey;
  private readonly publicKey?: { key: KeyObject; algorithm: 'RS256' | 'ES256' };

  constructor(private readonly options: TokenVerifierOptions) {
    if (!options.secret && !options.jwksUrl && !options.publicKey) {
      throw new Error(
        'authentication needs AUTH_JWT_SECRET (HS256), AUTH_JWKS_URL (RS256) or AUTH_PUBLIC_KEY',
      );
    }
    if (options.jwksUrl && !(options.issuer && options.audience)) {
      // Without them, any token the identity provider signed for any application is accepted.
      throw new Error('with AUTH_JWKS_URL, set AUTH_ISSUER and AUTH_AUDIENCE too');
    }
    if (options.secret) this.secret = new TextEncoder().encode(options.secret);
    if (options.jwksUrl) this.jwks = createRemoteJWKSet(new URL(options.jwksUrl));
    if (options.publicKey) this.publicKey = publicKeyOf(options.publicKey);
  }

  async verify(token: string): Promise<Caller> {
    const known = this.verified.get(token);
    if (known) {
      if (Date.now() < known.validUntilMs) return known.caller;
      this.verified.delete(token);
    }
    const algorithm = headerAlgorithm(token);
    const checks = {
      ...(this.options.issuer ? { issuer: this.options.issuer } : {}),
      ...(this.options.audience ? { audience: this.options.audience } : {}),
      requiredClaims: ['exp', 'iat'],
      maxTokenAge: `${this.options.maxTokenAgeSeconds ?? DEFAULT_MAX_TOKEN_AGE_SECONDS}s`,
    };
    let payload: JWTPayload;
    try {
      if (algorithm === 'HS256' && this.secret) {
        ({ payload } = await jwtVerify(token, this.secret, { ...checks, algorithms: ['HS256'] }));
      } else if (this.publicKey && algorithm === this.publicKey.algorithm) {
        ({ payload } = await jwtVerify(token, this.publicKey.key, {
          ...checks,
          algorithms: [this.publicKey.algorithm],
        }));
      } else if (algorithm === 'RS256' && this.jwks) {
        ({ payload } = await jwtVerify(token, this.jwks, { ...checks, algorithms: ['RS256'] }));
      } else {
        throw new AuthenticationError(`tokens signed with ${algorithm} are not accepted`);
      }
    } catch (error) {
      if (error instanceof AuthenticationError) throw error;
      if (error instanceof errors.JWTExpired) throw new AuthenticationError('token expired');
      if (error instanceof errors.JOSEError) {
        throw new AuthenticationError(`invalid token (${error.code})`);
      }
      throw error;
    }
    const claims = claimsSchema.safeParse(payload);
    if (!claims.success) {
      const issue = claims.error.issues[0];
      throw new AuthenticationError(
        `invalid token claim ${issue?.path.join('.')}: ${issue?.message}`,
      );
    }
    const caller: Caller = {
      tenantId: claims.data.tenant as Caller['tenantId'],
      userId: claims.data.sub,
      roles: [...new Set(claims.data.roles)],
      groups: [...new Set(claims.data.groups)],
      token,
    };
    // exp and iat are required claims, checked above.
    const maxAge = this.options.maxTokenAgeSeconds ?? DEFAULT_MAX_TOKEN_AGE_SECONDS;
    const validUntilMs = Math.min(Number(payload.exp), Number(payload.iat) + maxAge) * 1000;
    this.verified.set(token, { caller, validUntilMs });
    return caller;
  }
}

/** The key and the one algorithm it verifies: RS256 for an RSA key, ES256 for a P-256 key. */
function publicKeyOf(pem: string): { key: KeyObject; algorithm: 'RS256' | 'ES256' } {
  const key = createPublicKey(pem);
  if (key.asymmetricKeyType === 'rsa') return { key, algorithm: 'RS256' };
  if (key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1') {
    return { key, algorithm: 'ES256' };
  }
  throw new Error('AUTH_PUBLIC_KEY must be an RSA or a P-256 (EC) public key in PEM');
}

function headerAlgorithm(token: string): string {
  const [header] = token.split('.');
  try {
    const parsed = JSON.parse(Buffer.from(header ?? '', 'base64url').toString('utf8')) as {
      alg?: unknown;
    };
    if (typeof parsed.alg === 'string') return parsed.alg;
  } catch {
    // reported below
  }
  throw new AuthenticationError('invalid token (malformed header)');
}

export interface TokenClaims {
  tenant: string;
  user: string;
  roles?: string[];
  groups?: string[];
}

/** Mints an HS256 token (local use: `kb token`, tests, benchmarks). */
export function mintToken(
  claims: TokenClaims,
  secret: string,
  options: { ttlSeconds?: number; issuer?: string; audience?: string } = {},
): Promise<string> {
  let jwt = new SignJWT({
    tenant: claims.tenant,
    roles: claims.roles ?? [],
    groups: claims.groups ?? [],
  })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(claims.user)
    .setIssuedAt()
    .setExpirationTime(`${options.ttlSeconds ?? 3600}s`);
  if (options.issuer) jwt = jwt.setIssuer(options.issuer);
  if (options.audience) jwt = jwt.setAudience(options.audience);
  return jwt.sign(new TextEncoder().encode(secret));
}

/** The token of an `Authorization: Bearer <token>` value, or undefined. */
export function bearerToken(header: string | undefined): string | undefined {
  const match = /^Bearer\s+(\S+)$/i.exec(header ?? '');
  return match?.[1];
}

/** Settings as the services' config schemas name them (`authConfigSchema` in libs/config). */
export interface AuthSettings {
  AUTH_JWT_SECRET?: string | undefined;
  AUTH_JWKS_URL?: string | undefined;
  AUTH_PUBLIC_KEY?: string | undefined;
  AUTH_ISSUER?: string | undefined;
  AUTH_AUDIENCE?: string | undefined;
  AUTH_MAX_TOKEN_AGE_SECONDS?: number | undefined;
}

export function tokenVerifierFrom(settings: AuthSettings): TokenVerifier {
  return new TokenVerifier({
    secret: settings.AUTH_JWT_SECRET,
    jwksUrl: settings.AUTH_JWKS_URL,
    publicKey: settings.AUTH_PUBLIC_KEY,
    issuer: settings.AUTH_ISSUER,
    audience: settings.AUTH_AUDIENCE,
    maxTokenAgeSeconds: settings.AUTH_MAX_TOKEN_AGE_SECONDS,
  });
}
