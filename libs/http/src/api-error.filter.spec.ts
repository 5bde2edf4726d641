import { BadRequestException, PayloadTooLargeException, type ArgumentsHost } from '@nestjs/common';
import { ApiError } from './api-error';
import { ApiErrorFilter } from './api-error.filter';

function capture(exception: unknown): { status: number; body: unknown } {
  const result = { status: 0, body: undefined as unknown };
  const response = {
    status(code: number) {
      result.status = code;
      return this;
    },
    json(body: unknown) {
      result.body = body;
    },
  };
  const host = {
    switchToHttp: () => ({ getResponse: () => response }),
  } as unknown as ArgumentsHost;
  new ApiErrorFilter().catch(exception, host);
  return result;
}

describe('ApiErrorFilter', () => {
  it('renders an ApiError with its status, code and message', () => {
    expect(capture(new ApiError(404, 'document_not_found', 'document x not found'))).toEqual({
      status: 404,
      body: { error: { code: 'document_not_found', message: 'document x not found' } },
    });
  });

  it('gives framework errors a stable code', () => {
    expect(capture(new PayloadTooLargeException('File too large'))).toMatchObject({
      status: 413,
      body: { error: { code: 'payload_too_large', message: 'File too large' } },
    });
    expect(capture(new BadRequestException('bad'))).toMatchObject({
      status: 400,
      body: { error: { code: 'bad_request' } },
    });
  });

  it('hides unexpected errors behind a 500 without a stack', () => {
    const { status, body } = capture(new Error('secret detail'));
    expect(status).toBe(500);
    expect(JSON.stringify(body)).not.toContain('secret');
  });
});
