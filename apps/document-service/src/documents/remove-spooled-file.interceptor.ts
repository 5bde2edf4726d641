import {
  Injectable,
  Logger,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import { rm } from 'node:fs/promises';
import { finalize, type Observable } from 'rxjs';

/**
 * Removes the temporary file an upload was spooled to once the request is over, whatever its
 * outcome (a validation error in a pipe included). Put it before `FileInterceptor`.
 */
@Injectable()
export class RemoveSpooledFile implements NestInterceptor {
  private readonly logger = new Logger(RemoveSpooledFile.name);

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const request = context.switchToHttp().getRequest<{ file?: { path?: string } }>();
    return next.handle().pipe(
      finalize(() => {
        const path = request.file?.path;
        if (!path) return;
        rm(path, { force: true }).catch((error: unknown) =>
          this.logger.warn(`could not remove spooled upload ${path}: ${String(error)}`),
        );
      }),
    );
  }
}
