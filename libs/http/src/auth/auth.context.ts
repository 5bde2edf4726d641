import {
  type Access,
  AuthError,
  AuthErrorCode,
  bearerToken,
  type Caller,
  type TokenVerifier,
} from '@kb/auth';
import type { ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';

/** What the guards established about a call: who calls and, when asked for, what they may do. */
export interface AuthContext {
  caller: Caller;
  access?: Access;
}

/** gRPC metadata as far as reading the token goes (keeps @grpc/grpc-js out of this library). */
interface MetadataLike {
  get(key: string): unknown[];
}

/**
 * Per-call auth, keyed by the object that lives as long as the call: the HTTP request, or the
 * gRPC call's metadata. A WeakMap, so nothing is written onto framework objects and nothing leaks.
 */
const contexts = new WeakMap<object, AuthContext>();

function carrierOf(context: ExecutionContext): object {
  return context.getType() === 'rpc'
    ? context.switchToRpc().getContext<object>()
    : context.switchToHttp().getRequest<object>();
}

export function authContextOf(context: ExecutionContext): AuthContext | undefined {
  return contexts.get(carrierOf(context));
}

export function setAuthContext(context: ExecutionContext, auth: AuthContext): void {
  contexts.set(carrierOf(context), auth);
}

/** The `authorization` value of the call: the HTTP header, or the gRPC metadata entry. */
export function authorizationOf(context: ExecutionContext): string | undefined {
  if (context.getType() === 'rpc') {
    const value = context.switchToRpc().getContext<MetadataLike>().get('authorization')[0];
    return typeof value === 'string' ? value : undefined;
  }
  return context.switchToHttp().getRequest<Request>().header('authorization');
}

/** Verifies an `authorization` value (`Bearer <JWT>`); every failure is an unauthenticated AuthError. */
export async function authenticate(
  verifier: TokenVerifier,
  authorization: string | undefined,
): Promise<Caller> {
  const token = bearerToken(authorization);
  if (!token) {
    throw new AuthError(AuthErrorCode.Unauthenticated, 'Authorization: Bearer <token> is required');
  }
  // The verifier's own failures are AuthenticationErrors (unauthenticated) with a safe reason.
  return verifier.verify(token);
}
