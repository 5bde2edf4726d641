import { Metadata, type ServerUnaryCall } from '@grpc/grpc-js';
import {
  applyDecorators,
  Controller,
  createParamDecorator,
  type ExecutionContext,
  UseFilters,
} from '@nestjs/common';

import { GrpcExceptionFilter } from './grpc-exception.filter';

/**
 * A controller of `@GrpcMethod` handlers with the gRPC exception filter. (A hybrid app's gRPC
 * transport does not share the HTTP app's global filters and guards, so each gRPC controller
 * carries its filter, and each method its `@Authenticated()` from libs/http.)
 */
export const GrpcService = (): ClassDecorator =>
  applyDecorators(Controller(), UseFilters(GrpcExceptionFilter));

/** What a handler may do with the call it serves beyond answering it. */
export type GrpcCall = Pick<ServerUnaryCall<unknown, unknown>, 'sendMetadata'> &
  /** The client's deadline (`Infinity` when it set none); absent in some test doubles. */
  Partial<Pick<ServerUnaryCall<unknown, unknown>, 'getDeadline'>>;

/**
 * The call a `@GrpcMethod` handler serves (Nest passes the message, its metadata and the call),
 * for what only the call can do, such as sending response headers (`sendResponseHeaders`).
 */
export const CurrentGrpcCall = createParamDecorator(
  (_: unknown, context: ExecutionContext): GrpcCall => context.getArgByIndex(2),
);

/** Sends response headers (initial metadata) on a call; must come before its response. */
export function sendResponseHeaders(call: GrpcCall, headers: Record<string, string>): void {
  const metadata = new Metadata();
  for (const [name, value] of Object.entries(headers)) metadata.set(name, value);
  call.sendMetadata(metadata);
}
