import {
  CLOSERS,
  HealthController,
  MetricsController,
  READINESS_CHECKS,
  Readiness,
  ResourceCloser,
} from '@kb/http';
import { Module } from '@nestjs/common';
import { AuthorizationController } from './authorization/authorization.controller';
import { AuthorizationService } from './authorization/authorization.service';

@Module({
  controllers: [AuthorizationController, HealthController, MetricsController],
  providers: [
    AuthorizationService,
    Readiness,
    { provide: READINESS_CHECKS, useValue: [] },
    { provide: CLOSERS, useValue: [] },
    ResourceCloser,
  ],
})
export class AppModule {}
