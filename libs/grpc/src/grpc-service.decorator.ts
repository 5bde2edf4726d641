import { applyDecorators, Controller, UseFilters } from '@nestjs/common';

import { GrpcExceptionFilter } from './grpc-exception.filter';

/**
 * A controller of `@GrpcMethod` handlers with the gRPC exception filter. (A hybrid app's gRPC
 * transport does not share the HTTP app's global filters and guards, so each gRPC controller
 * carries its filter, and each method its `@Authenticated()` from libs/http.)
 */
export const GrpcService = (): ClassDecorator =>
  applyDecorators(Controller(), UseFilters(GrpcExceptionFilter));
