import type { loadPackageDefinition, ServiceDefinition } from '@grpc/grpc-js';
import { type INestApplication, Logger } from '@nestjs/common';
import { type GrpcOptions, Transport } from '@nestjs/microservices';

export interface GrpcTransportOptions {
  host: string;
  port: number;
  /**
   * The services to serve, by fully-qualified name, as the generated stubs in libs/contracts
   * define them, e.g. `{ 'kb.v1.KnowledgeBase': kbv1.KnowledgeBaseService }`.
   */
  services: Record<string, ServiceDefinition>;
}

/**
 * The gRPC transport of a hybrid Nest app: `@GrpcMethod` handlers of `@GrpcService()`
 * controllers, served by @nestjs/microservices on @grpc/grpc-js.
 *
 * The package definition is built from the ts-proto stubs that kb-cli, the scripts and the tests
 * call with, rather than loaded from the .proto by @grpc/proto-loader: both come from
 * libs/contracts/proto, but only the stubs decode `google.protobuf.Struct` fields (filters,
 * document metadata) to plain objects, and sharing the clients' codec keeps the wire identical.
 * Method keys are the rpc names (`Search`), as `@GrpcMethod('KnowledgeBase', 'Search')` expects.
 *
 * On shutdown Nest closes the server after the `beforeApplicationShutdown` hooks and before the
 * `onApplicationShutdown` ones that release the stores; `gracefulShutdown` lets in-flight calls
 * finish first (grpc-js `tryShutdown`).
 */
export class GrpcTransport {
  private readonly logger = new Logger(GrpcTransport.name);
  private bound = false;

  constructor(private readonly options: GrpcTransportOptions) {}

  /** True once the server has bound its port and registered its services. */
  get listening(): boolean {
    return this.bound;
  }

  /** Attaches the transport to `app`; it listens on `app.startAllMicroservices()`. */
  connect(app: INestApplication): void {
    const url = `${this.options.host}:${this.options.port}`;
    const names = Object.keys(this.options.services);
    app.connectMicroservice<GrpcOptions>({
      transport: Transport.GRPC,
      options: {
        url,
        package: [...new Set(names.map(packageOf))],
        packageDefinition: packageDefinitionOf(this.options.services),
        gracefulShutdown: true,
        // Called once the port is bound, before the services are added.
        onLoadPackageDefinition: () => {
          this.bound = true;
          this.logger.log(`gRPC ${names.join(', ')} listening on ${url}`);
        },
      },
    });
  }
}

type PackageDefinition = Parameters<typeof loadPackageDefinition>[0];

/** `kb.v1` of `kb.v1.KnowledgeBase`. */
function packageOf(serviceName: string): string {
  return serviceName.slice(0, serviceName.lastIndexOf('.'));
}

/**
 * A grpc-js package definition of generated service definitions, keyed by rpc name (the last
 * segment of each method's path) with the stub's camelCase name as `originalName`.
 */
export function packageDefinitionOf(
  services: Record<string, ServiceDefinition>,
): PackageDefinition {
  const definition: PackageDefinition = {};
  for (const [name, service] of Object.entries(services)) {
    definition[name] = Object.fromEntries(
      Object.entries(service).map(([key, method]) => [
        method.path.slice(method.path.lastIndexOf('/') + 1),
        { ...method, originalName: key },
      ]),
    );
  }
  return definition;
}
