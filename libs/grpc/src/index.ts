export * from './grpc.transport';
export * from './grpc-exception.filter';
export * from './grpc-service.decorator';
export * from './grpc.testing';
