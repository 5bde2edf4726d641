import type { TokenVerifier } from '@kb/auth';
import { aclv1 } from '@kb/contracts';
import { ApiError, authenticate } from '@kb/http';
import {
  Metadata,
  Server,
  ServerCredentials,
  status,
  type sendUnaryData,
  type ServiceError,
} from '@grpc/grpc-js';
import {
  Inject,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { ACL_CONFIG, type AclConfig } from '../config/acl.config';
import { TOKEN_VERIFIER } from '../platform/tokens';
import { PolicyService } from '../policy/policy.service';

/** gRPC `kb.v1.AccessControl`: the caller is the token in the `authorization` metadata. */
@Injectable()
export class AccessControlGrpcServer implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(AccessControlGrpcServer.name);
  private readonly server = new Server();

  constructor(
    private readonly policy: PolicyService,
    @Inject(TOKEN_VERIFIER) private readonly verifier: TokenVerifier,
    @Inject(ACL_CONFIG) private readonly config: AclConfig,
  ) {
    const implementation: aclv1.AccessControlServer = {
      check: (call, callback) =>
        void this.unary(callback, async () => {
          const caller = await this.caller(call.metadata);
          return {
            allowed: await this.policy.check(caller, call.request.action, call.request.resource),
          };
        }),
      batchCheck: (call, callback) =>
        void this.unary(callback, async () => {
          const caller = await this.caller(call.metadata);
          const results = [];
          for (const c of call.request.checks.slice(0, 100)) {
            results.push({ allowed: await this.policy.check(caller, c.action, c.resource) });
          }
          return { results };
        }),
      expandPrincipals: (call, callback) =>
        void this.unary(callback, async () => {
          const expansion = await this.policy.expand(await this.caller(call.metadata));
          return { ...expansion, policyVersion: expansion.policyVersion };
        }),
    };
    this.server.addService(aclv1.AccessControlService, implementation);
  }

  async onApplicationBootstrap(): Promise<void> {
    const address = `${this.config.GRPC_HOST}:${this.config.GRPC_PORT}`;
    const port = await new Promise<number>((resolve, reject) =>
      this.server.bindAsync(address, ServerCredentials.createInsecure(), (error, bound) =>
        error ? reject(error) : resolve(bound),
      ),
    );
    this.logger.log(`gRPC kb.v1.AccessControl listening on ${this.config.GRPC_HOST}:${port}`);
  }

  async beforeApplicationShutdown(): Promise<void> {
    await new Promise<void>((resolve) => this.server.tryShutdown(() => resolve()));
  }

  private caller(metadata: Metadata) {
    const value = metadata.get('authorization')[0];
    return authenticate(this.verifier, typeof value === 'string' ? value : undefined);
  }

  private async unary<T>(callback: sendUnaryData<T>, handler: () => Promise<T>): Promise<void> {
    try {
      callback(null, await handler());
    } catch (error) {
      if (error instanceof ApiError && error.status === 401) {
        callback({
          code: status.UNAUTHENTICATED,
          details: error.message,
        } as Partial<ServiceError> as ServiceError);
        return;
      }
      this.logger.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
      callback({
        code: status.INTERNAL,
        details: 'internal error',
      } as Partial<ServiceError> as ServiceError);
    }
  }
}
