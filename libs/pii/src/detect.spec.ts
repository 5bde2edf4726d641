import { detectPii, summarize } from './detect';

const found = (text: string) => detectPii(text).map((f) => [f.type, text.slice(f.start, f.end)]);

describe('detectPii', () => {
  it('finds each type, with offsets that point at the value', () => {
    expect(
      found(
        'Mail jane.doe@example.com or +44 20 7946 0958; card 4111-1111-1111-1111; ' +
          'IBAN DE89 3704 0044 0532 0130 00 today; SSN 123-45-6789; host 192.168.1.20 or ' +
          '2001:db8::8a2e:370:7334; key AKIAIOSFODNN7EXAMPLE.',
      ),
    ).toEqual([
      ['email', 'jane.doe@example.com'],
      ['phone', '+44 20 7946 0958'],
      ['card', '4111-1111-1111-1111'],
      ['iban', 'DE89 3704 0044 0532 0130 00'],
      ['ssn', '123-45-6789'],
      ['ip', '192.168.1.20'],
      ['ip', '2001:db8::8a2e:370:7334'],
      ['secret', 'AKIAIOSFODNN7EXAMPLE'],
    ]);
  });

  it('leaves ordinary numbers alone: dates, ids, versions, prices, checksums that fail', () => {
    expect(
      found(
        'On 2024-01-15 at 12:30:45 order 4155552672 (v1.2.3.4, version 1.2.3.4, OID 1.3.6.1.4.1) ' +
          'cost $1,234.56; ref 4111 1111 1111 1112, DE89 3704 0044 0532 0130 01, SSN 000-12-3456, ' +
          'MAC 00:1A:2B:3C:4D:5E, std::vector, icon@2x.png, sk-learn-compatible-2024, id 456-78-9012-A.',
      ),
    ).toEqual([]);
  });

  it('finds private-key blocks but not public keys or certificates', () => {
    const key = '-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----';
    expect(found(`a ${key} b`)).toEqual([['secret', key]]);
    expect(found('-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----')).toEqual([]);
  });

  it('keeps the more specific of two overlapping findings', () => {
    // An address inside a connection string that is itself no secret, a card inside a secret.
    expect(found('token sk_live_4111111111111111abcdEFGH')).toEqual([
      ['secret', 'sk_live_4111111111111111abcdEFGH'],
    ]);
  });

  it('counts findings by type', () => {
    expect(summarize(detectPii('a@example.com b@example.org 10.0.0.1'))).toEqual({
      email: 2,
      ip: 1,
    });
  });
});
