import { parseBody } from '@kb/http';
import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import {
  AuthorizationService,
  checkRequestSchema,
  type CheckResult,
} from './authorization.service';

@Controller('v1/check')
export class AuthorizationController {
  constructor(private readonly authorization: AuthorizationService) {}

  @Post()
  @HttpCode(200)
  check(@Body() body: unknown): CheckResult {
    return this.authorization.check(parseBody(checkRequestSchema, body));
  }
}
