import {
  AccessUnavailableError,
  AuthenticationError,
  bearerToken,
  type Access,
  type AccessResolver,
  type Caller,
  type TokenVerifier,
} from '@kb/auth';
import {
  createParamDecorator,
  SetMetadata,
  type CanActivate,
  type ExecutionContext,
} from '@nestjs/common';
import type { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { ApiError } from './api-error';

const IS_PUBLIC = 'kb:public';

/** Marks a controller or route that needs no token (probes, metrics, API descriptions). */
export const Public = (): ClassDecorator & MethodDecorator => SetMetadata(IS_PUBLIC, true);

type AuthenticatedRequest = Request & { caller?: Caller };

/**
 * Every REST route requires `Authorization: Bearer <JWT>` unless marked @Public(); the verified
 * caller is attached to the request for @CurrentCaller(). No token or a bad one is a 401.
 */
export class AuthGuard implements CanActivate {
  constructor(
    private readonly verifier: TokenVerifier,
    private readonly reflector: Reflector,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const isPublic = this.reflector.getAllAndOverride<boolean | undefined>(IS_PUBLIC, [
      context.getHandler(),
      context.getClass(),
    ]);
    if (isPublic) return true;
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    request.caller = await authenticate(this.verifier, request.header('authorization'));
    return true;
  }
}

/** Verifies an Authorization header value; every failure is a 401 ApiError. */
export async function authenticate(
  verifier: TokenVerifier,
  authorization: string | undefined,
): Promise<Caller> {
  const token = bearerToken(authorization);
  if (!token) {
    throw new ApiError(401, 'unauthenticated', 'Authorization: Bearer <token> is required');
  }
  try {
    return await verifier.verify(token);
  } catch (error) {
    if (error instanceof AuthenticationError) {
      throw new ApiError(401, 'unauthenticated', error.reason);
    }
    throw error;
  }
}

/** The verified caller of the current request (set by AuthGuard). */
export const CurrentCaller = createParamDecorator((_: unknown, context: ExecutionContext) => {
  const caller = context.switchToHttp().getRequest<AuthenticatedRequest>().caller;
  if (!caller) throw new ApiError(401, 'unauthenticated', 'no authenticated caller');
  return caller;
});

/** The caller's access from acl-service; its outage is a 503 (fail closed), never an allow. */
export async function accessOf(resolver: AccessResolver, caller: Caller): Promise<Access> {
  try {
    return await resolver.resolve(caller);
  } catch (error) {
    if (error instanceof AccessUnavailableError) {
      throw new ApiError(503, 'unavailable', 'authorization is unavailable, retry later');
    }
    if ((error as { code?: unknown }).code === 16) {
      throw new ApiError(401, 'unauthenticated', 'acl-service rejected the token');
    }
    throw error;
  }
}
