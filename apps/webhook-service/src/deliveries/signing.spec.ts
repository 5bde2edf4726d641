import { createHmac } from 'node:crypto';

import { Webhook } from 'standardwebhooks';

import { WebhookErrorCode } from '../webhooks/webhooks.errors';
import { checkSecret, newSecret, signedHeaders } from './signing';

describe('signing (Standard Webhooks)', () => {
  it('reproduces the example signature of the Standard Webhooks specification', () => {
    // The specification's example: secret, message id, timestamp, body and the signature it gives.
    const headers = signedHeaders(
      ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'],
      'msg_p5jXN8AQM9LWM0D4loKWxJek',
      new Date(1614265330 * 1000),
      '{"test": 2432232314}',
    );
    expect(headers).toEqual({
      'webhook-id': 'msg_p5jXN8AQM9LWM0D4loKWxJek',
      'webhook-timestamp': '1614265330',
      'webhook-signature': 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
    });
  });

  it('signs HMAC-SHA256 of id.timestamp.body with the decoded secret, in whole seconds', () => {
    const secret = newSecret();
    const at = new Date('2026-11-27T10:00:00.750Z');
    const body = JSON.stringify({ type: 'document.indexed', data: { n: 'é' } });
    const headers = signedHeaders([secret], 'msg_1', at, body);
    const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
    const expected = createHmac('sha256', key)
      .update(`msg_1.${Math.floor(at.getTime() / 1000)}.${body}`)
      .digest('base64');
    expect(headers['webhook-timestamp']).toBe('1795773600');
    expect(headers['webhook-signature']).toBe(`v1,${expected}`);
  });

  it('is verified by a receiver using the reference library, and a changed body is not', () => {
    const secret = newSecret();
    const body = '{"type":"document.deleted"}';
    const headers = signedHeaders([secret], 'msg_2', new Date(), body);
    expect(new Webhook(secret).verify(body, { ...headers })).toEqual({
      type: 'document.deleted',
    });
    expect(() => new Webhook(secret).verify(`${body} `, { ...headers })).toThrow();
  });

  it('signs with every secret during a rotation, so a receiver holding either one verifies', () => {
    const [current, previous, unrelated] = [newSecret(), newSecret(), newSecret()];
    const body = '{"type":"document.indexed"}';
    const headers = signedHeaders([current, previous], 'msg_3', new Date(), body);
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(headers['webhook-signature']).toMatch(/^v1,\S+ v1,\S+$/);
    expect(new Webhook(current).verify(body, { ...headers })).toEqual({ type: 'document.indexed' });
    expect(new Webhook(previous).verify(body, { ...headers })).toEqual({
      type: 'document.indexed',
    });
    expect(() => new Webhook(unrelated).verify(body, { ...headers })).toThrow();
  });

  it('generates whsec_ secrets of 32 random bytes, different each time', () => {
    const a = newSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(a.slice(6), 'base64')).toHaveLength(32);
    expect(newSecret()).not.toBe(a);
    expect(checkSecret(a)).toBe(a);
  });

  it.each([
    ['no prefix', 'MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'],
    ['too short', `whsec_${Buffer.alloc(16).toString('base64')}`],
    ['too long', `whsec_${Buffer.alloc(65).toString('base64')}`],
    ['not base64', 'whsec_not base64 at all, clearly not!!'],
  ])('refuses a secret with %s', (_, secret) => {
    expect(() => checkSecret(secret)).toThrow(
      expect.objectContaining({ code: WebhookErrorCode.InvalidSecret }),
    );
  });
});
