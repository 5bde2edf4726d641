import type { TokenVerifier } from '@kb/auth';
import { type CanActivate, type ExecutionContext, SetMetadata } from '@nestjs/common';
import type { Reflector } from '@nestjs/core';

import { authenticate, authorizationOf, setAuthContext } from './auth.context';

const IS_PUBLIC = 'kb:public';

/** Marks a controller or route that needs no token (probes, metrics, API descriptions). */
export const Public = (): ClassDecorator & MethodDecorator => SetMetadata(IS_PUBLIC, true);

/**
 * Every REST route requires `Authorization: Bearer <JWT>` unless marked @Public(): installed as a
 * global guard by `bootHttpService`, so a route cannot forget it. The verified caller is kept for
 * @CurrentCaller() and for `@Authenticated()`, which adds access and permissions on top.
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
    setAuthContext(context, {
      caller: await authenticate(this.verifier, authorizationOf(context)),
    });
    return true;
  }
}
