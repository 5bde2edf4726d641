import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { kafkaConnectionOf } from './kafka';

const brokers = ['b1:9093', 'b2:9093'];

describe('kafkaConnectionOf', () => {
  it('is plaintext without TLS or SASL settings (the local servers)', () => {
    expect(kafkaConnectionOf({ KAFKA_BROKERS: brokers, KAFKA_SSL: false })).toEqual({ brokers });
  });

  it('turns on TLS with the system CAs, and SASL SCRAM with the given credentials', () => {
    expect(
      kafkaConnectionOf({
        KAFKA_BROKERS: brokers,
        KAFKA_SSL: true,
        KAFKA_SASL_MECHANISM: 'scram-sha-512',
        KAFKA_SASL_USERNAME: 'kb-query',
        KAFKA_SASL_PASSWORD: 's3cret',
      }),
    ).toEqual({
      brokers,
      ssl: true,
      sasl: { mechanism: 'scram-sha-512', username: 'kb-query', password: 's3cret' },
    });
  });

  it('reads the CA and the client certificate and key for mutual TLS from files', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kb-kafka-tls-'));
    for (const name of ['ca.pem', 'cert.pem', 'key.pem']) {
      writeFileSync(join(dir, name), `-----${name}-----`);
    }
    expect(
      kafkaConnectionOf({
        KAFKA_BROKERS: brokers,
        KAFKA_SSL: true,
        KAFKA_SSL_CA_FILE: join(dir, 'ca.pem'),
        KAFKA_SSL_CERT_FILE: join(dir, 'cert.pem'),
        KAFKA_SSL_KEY_FILE: join(dir, 'key.pem'),
        KAFKA_SASL_MECHANISM: 'plain',
        KAFKA_SASL_USERNAME: 'u',
        KAFKA_SASL_PASSWORD: 'p',
      }),
    ).toEqual({
      brokers,
      ssl: { ca: ['-----ca.pem-----'], cert: '-----cert.pem-----', key: '-----key.pem-----' },
      sasl: { mechanism: 'plain', username: 'u', password: 'p' },
    });
  });

  it('refuses incomplete combinations, naming what is missing', () => {
    expect(() =>
      kafkaConnectionOf({ KAFKA_BROKERS: brokers, KAFKA_SASL_MECHANISM: 'scram-sha-256' }),
    ).toThrow('KAFKA_SASL_MECHANISM needs KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD');
    expect(() =>
      kafkaConnectionOf({ KAFKA_BROKERS: brokers, KAFKA_SSL: true, KAFKA_SSL_CERT_FILE: 'c' }),
    ).toThrow('KAFKA_SSL_CERT_FILE and KAFKA_SSL_KEY_FILE go together');
    expect(() => kafkaConnectionOf({ KAFKA_BROKERS: brokers, KAFKA_SSL_CA_FILE: 'ca' })).toThrow(
      'need KAFKA_SSL=true',
    );
  });
});
