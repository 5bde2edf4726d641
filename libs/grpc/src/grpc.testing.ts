import { createServer } from 'node:net';

import { Metadata, type ServiceDefinition, type ServiceError } from '@grpc/grpc-js';
import type { INestApplication } from '@nestjs/common';

import { GrpcTransport } from './grpc.transport';

/** A loopback port nothing listens on right now (the OS picks it). */
export function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() =>
        typeof address === 'object' && address
          ? resolve(address.port)
          : reject(new Error('no port')),
      );
    });
  });
}

/**
 * For specs: serves `app`'s `@GrpcMethod` controllers on a free loopback port, without HTTP, and
 * returns the address to dial. `app.close()` stops it.
 */
export async function startGrpcOnLoopback(
  app: INestApplication,
  services: Record<string, ServiceDefinition>,
): Promise<string> {
  const port = await freeLoopbackPort();
  new GrpcTransport({ host: '127.0.0.1', port, services }).connect(app);
  await app.startAllMicroservices();
  await app.init();
  return `127.0.0.1:${port}`;
}

/** A unary method of a generated client, in its (request, metadata, callback) form. */
export type UnaryMethod<Req, Res> = (
  request: Req,
  metadata: Metadata,
  callback: (error: ServiceError | null, response: Res) => void,
) => unknown;

/** For specs: calls `method` of `client` with `Bearer <token>` in the metadata, as a promise. */
export function callWithToken<Req, Res>(
  client: object,
  method: UnaryMethod<Req, Res>,
  request: Req,
  token: string,
): Promise<Res> {
  const metadata = new Metadata();
  metadata.set('authorization', `Bearer ${token}`);
  return new Promise((resolve, reject) =>
    method.call(client, request, metadata, (error, response) =>
      error ? reject(error) : resolve(response),
    ),
  );
}
