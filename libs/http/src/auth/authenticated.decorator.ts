import {
  type Access,
  type AccessPolicy,
  AuthError,
  AuthErrorCode,
  type Caller,
  type Permission,
  type TokenVerifier,
} from '@kb/auth';
import {
  applyDecorators,
  type CanActivate,
  createParamDecorator,
  type ExecutionContext,
  Inject,
  Injectable,
  Optional,
  SetMetadata,
  UseGuards,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';

import { RATE_LIMITER, type RateLimitBucket, type RateLimiter } from '../rate-limit/index';
import { authContextOf, authenticate, authorizationOf, setAuthContext } from './auth.context';

/** The service's `TokenVerifier`, for the guard behind @Authenticated(). */
export const TOKEN_VERIFIER = Symbol('TOKEN_VERIFIER');
/** The service's `AccessPolicy` (libs/auth), for @Authenticated({ access }) and ({ permission }). */
export const ACCESS_POLICY = Symbol('ACCESS_POLICY');

const AUTHENTICATED = 'kb:authenticated';

export interface AuthenticatedOptions {
  /** Resolve the caller's access (principals, document actions) for @CurrentAccess(). */
  access?: boolean;
  /** A permission the caller must hold in their tenant: permission_denied (403) otherwise. */
  permission?: Permission;
  /**
   * The budget a call draws on, per caller and per tenant (the service's `RATE_LIMITER`):
   * rate_limited (429 with Retry-After, gRPC RESOURCE_EXHAUSTED) once it is spent. Taken right
   * after the token is verified, before acl-service is asked anything.
   */
  rateLimit?: RateLimitBucket;
}

/**
 * The one way a handler, REST or gRPC, learns who calls and what they may do (immich's
 * `@Authenticated({ permission })`): the guard verifies the bearer token of the request or of the
 * `authorization` metadata, asks the `ACCESS_POLICY` for access and permissions when told to, and
 * hands the results to @CurrentCaller() and @CurrentAccess(). Put it on every gRPC method: the
 * gRPC transport has no global guard.
 */
export const Authenticated = (options: AuthenticatedOptions = {}): MethodDecorator =>
  applyDecorators(SetMetadata(AUTHENTICATED, options), UseGuards(AccessGuard));

@Injectable()
export class AccessGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    @Inject(TOKEN_VERIFIER) private readonly verifier: TokenVerifier,
    @Optional() @Inject(ACCESS_POLICY) private readonly policy?: AccessPolicy,
    @Optional() @Inject(RATE_LIMITER) private readonly limiter?: RateLimiter,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const options =
      this.reflector.get<AuthenticatedOptions | undefined>(AUTHENTICATED, context.getHandler()) ??
      {};
    // Over REST the global AuthGuard has verified the token already.
    const caller =
      authContextOf(context)?.caller ??
      (await authenticate(this.verifier, authorizationOf(context)));
    if (options.rateLimit) await this.requireLimiter().consume(options.rateLimit, caller);
    if (options.permission) await this.requirePolicy().authorize(caller, options.permission);
    const access = options.access ? await this.requirePolicy().accessOf(caller) : undefined;
    setAuthContext(context, access ? { caller, access } : { caller });
    return true;
  }

  private requireLimiter(): RateLimiter {
    if (!this.limiter)
      throw new Error('@Authenticated({ rateLimit }) needs a RATE_LIMITER provider');
    return this.limiter;
  }

  private requirePolicy(): AccessPolicy {
    if (!this.policy) throw new Error('@Authenticated() needs an ACCESS_POLICY provider');
    return this.policy;
  }
}

/** The verified caller of the current request or call (set by AuthGuard or @Authenticated()). */
export const CurrentCaller = createParamDecorator(
  (_: unknown, context: ExecutionContext): Caller => {
    const caller = authContextOf(context)?.caller;
    if (!caller) throw new AuthError(AuthErrorCode.Unauthenticated, 'no authenticated caller');
    return caller;
  },
);

/** The caller's access, resolved by @Authenticated({ access: true }) on the same handler. */
export const CurrentAccess = createParamDecorator(
  (_: unknown, context: ExecutionContext): Access => {
    const access = authContextOf(context)?.access;
    if (!access) throw new Error('@CurrentAccess() needs @Authenticated({ access: true })');
    return access;
  },
);
