import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import { isTenantId, type TenantId } from '@kb/contracts';
import type { Request } from 'express';
import { ApiError } from './api-error';

export const TENANT_HEADER = 'x-tenant-id';

/**
 * The caller's tenant. Until JWT authentication lands (issue 5) it is read from the
 * `X-Tenant-Id` header; a missing or malformed value is a 401.
 */
export const Tenant = createParamDecorator((_: unknown, context: ExecutionContext): TenantId => {
  const request = context.switchToHttp().getRequest<Request>();
  const value = request.header(TENANT_HEADER);
  if (!isTenantId(value)) {
    throw new ApiError(
      401,
      'unauthenticated',
      `header ${TENANT_HEADER} is required: lower-case letters, digits, '-' or '_'`,
    );
  }
  return value;
});
