export * from './grpc.testing';
export * from './grpc.transport';
export * from './grpc-exception.filter';
export * from './grpc-service.decorator';
