import { status } from '@grpc/grpc-js';
import { GrpcCode } from '@kb/errors';

describe('GrpcCode', () => {
  it.each(Object.entries(GrpcCode))('numbers %s as @grpc/grpc-js does', (name, code) => {
    expect(status[name as keyof typeof status]).toBe(code);
  });
});
