import { rm } from 'node:fs/promises';

import {
  type CallHandler,
  type ExecutionContext,
  Injectable,
  Logger,
  type NestInterceptor,
} from '@nestjs/common';
import { catchError, concatMap, type Observable } from 'rxjs';

/**
 * Removes the temporary file an upload was spooled to once the request is handled, whatever its
 * outcome (a validation error in a pipe included), before the response goes out: a client that
 * has its answer finds no file left behind. Put it before `FileInterceptor`.
 */
@Injectable()
export class RemoveSpooledFile implements NestInterceptor {
  private readonly logger = new Logger(RemoveSpooledFile.name);

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const request = context.switchToHttp().getRequest<{ file?: { path?: string } }>();
    const remove = async (): Promise<void> => {
      const path = request.file?.path;
      if (!path) return;
      await rm(path, { force: true }).catch((error: unknown) =>
        this.logger.warn(`could not remove spooled upload ${path}: ${String(error)}`),
      );
    };
    return next.handle().pipe(
      concatMap(async (value: unknown) => {
        await remove();
        return value;
      }),
      catchError(async (error: unknown) => {
        await remove();
        throw error;
      }),
    );
  }
}
