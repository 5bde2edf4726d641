import {
  type CallHandler,
  type ExecutionContext,
  Injectable,
  type NestInterceptor,
  PayloadTooLargeException,
  SetMetadata,
} from '@nestjs/common';
import type { Reflector } from '@nestjs/core';
import { json, type Request, type RequestHandler, type Response, urlencoded } from 'express';
import type { Observable } from 'rxjs';

/** The largest JSON or form body of a route that names no other (express's own default). */
export const DEFAULT_BODY_LIMIT = '100kb';

const BODY_LIMIT = 'kb:body-limit';

/**
 * A route that takes a body larger than the app's default (express's `limit`, e.g. `16mb`). Like
 * every body, it is read only after the route's guards have passed (see `BodyParserInterceptor`):
 * the caller is authenticated, holds the route's permission and has spent a rate-limit point.
 */
export const BodyLimit = (limit: string): ClassDecorator & MethodDecorator =>
  SetMetadata(BODY_LIMIT, limit);

/**
 * Reads and parses JSON and URL-encoded bodies after the guards, instead of Express middleware
 * before them (security review N3: a 16 MB body parsed before the token was even looked at). An
 * unauthenticated request is answered 401 with its body never buffered: Node discards it off
 * the socket. Installed globally by `useRestDefaults`, with `bootHttpService` turning Nest's own
 * parsers off; where they still run (tests on `Test.createNestApplication`), a body they already
 * read is left as it is. Over the limit: 413 `payload_too_large`. Multipart bodies are multer's,
 * in the route's own interceptor, which runs after this one.
 */
@Injectable()
export class BodyParserInterceptor implements NestInterceptor {
  private readonly parsers = new Map<string, RequestHandler[]>();

  constructor(
    private readonly reflector: Reflector,
    private readonly defaultLimit: string = DEFAULT_BODY_LIMIT,
  ) {}

  async intercept(context: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
    if (context.getType() !== 'http') return next.handle();
    const limit =
      this.reflector.getAllAndOverride<string | undefined>(BODY_LIMIT, [
        context.getHandler(),
        context.getClass(),
      ]) ?? this.defaultLimit;
    const http = context.switchToHttp();
    await this.read(http.getRequest<Request>(), http.getResponse<Response>(), limit);
    return next.handle();
  }

  private async read(request: Request, response: Response, limit: string): Promise<void> {
    for (const parser of this.parsersFor(limit)) {
      await new Promise<void>((resolve, reject) =>
        parser(request, response, (error?: unknown) => (error ? reject(error) : resolve())),
      ).catch((error: unknown) => {
        if ((error as { type?: unknown }).type === 'entity.too.large') {
          throw new PayloadTooLargeException(
            `the request body is larger than this route accepts (${limit})`,
          );
        }
        throw error;
      });
    }
  }

  private parsersFor(limit: string): RequestHandler[] {
    let parsers = this.parsers.get(limit);
    if (!parsers) {
      // What Nest registers by default, with the route's limit.
      parsers = [json({ limit }), urlencoded({ limit, extended: true })];
      this.parsers.set(limit, parsers);
    }
    return parsers;
  }
}
