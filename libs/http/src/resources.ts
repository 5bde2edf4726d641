import { shutdownTelemetry } from '@kb/observability';
import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';

export const CLOSERS = Symbol('CLOSERS');

/** Something to release at shutdown: a pool, a producer, a client. */
export type Closer = () => Promise<void> | void;

/**
 * Closes the service's adapters after Nest has stopped its controllers and consumers, in the
 * order given, so producers flush after the last handler ran; telemetry is flushed last.
 */
@Injectable()
export class ResourceCloser implements OnApplicationShutdown {
  private readonly logger = new Logger(ResourceCloser.name);

  constructor(@Inject(CLOSERS) private readonly closers: Closer[]) {}

  async onApplicationShutdown(): Promise<void> {
    for (const close of this.closers) {
      try {
        await close();
      } catch (error) {
        this.logger.warn(`closing a resource failed: ${String(error)}`);
      }
    }
    await shutdownTelemetry();
  }
}
