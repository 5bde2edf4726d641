import { randomBytes, randomUUID } from 'node:crypto';

import { isSecretKey, SecretBox, SecretUnreadableError } from './secret-box';

const newKey = (): string => randomBytes(32).toString('base64');
const secret = `whsec_${randomBytes(32).toString('base64')}`;

describe('SecretBox (webhook secrets at rest, review N11)', () => {
  const webhookId = randomUUID();

  it('seals a secret so that the stored value does not contain it, and opens it again', () => {
    const box = new SecretBox(newKey());
    const sealed = box.seal(secret, webhookId);
    expect(sealed).toMatch(new RegExp(`^kbsec:v1:${box.keyId}:[A-Za-z0-9+/=]+$`));
    expect(sealed).not.toContain(secret);
    expect(sealed).not.toContain(secret.slice('whsec_'.length, 20));
    expect(box.open(sealed, webhookId)).toBe(secret);
    // A fresh iv each time: the same secret never seals the same way twice.
    expect(box.seal(secret, webhookId)).not.toBe(sealed);
    expect(box.isCurrent(sealed)).toBe(true);
  });

  it('opens a plaintext secret stored before encryption as itself, and calls it not current', () => {
    const box = new SecretBox(newKey());
    expect(box.open(secret, webhookId)).toBe(secret);
    expect(box.isCurrent(secret)).toBe(false);
  });

  it('refuses an altered value, another subscription\u2019s value and an unknown key', () => {
    const box = new SecretBox(newKey());
    const sealed = box.seal(secret, webhookId);
    const payload = Buffer.from(sealed.split(':')[3]!, 'base64');
    payload[payload.length - 20]! ^= 1;
    const altered = `${sealed.split(':').slice(0, 3).join(':')}:${payload.toString('base64')}`;
    expect(() => box.open(altered, webhookId)).toThrow(SecretUnreadableError);
    expect(() => box.open(sealed, randomUUID())).toThrow(/not this subscription/);
    expect(() => new SecretBox(newKey()).open(sealed, webhookId)).toThrow(
      new RegExp(`key ${box.keyId}, which is neither`),
    );
    // The message never carries the secret.
    try {
      new SecretBox(newKey()).open(sealed, webhookId);
    } catch (error) {
      expect(String(error)).not.toContain(secret);
    }
  });

  it('rotates keys: previous keys still open, the current one seals', () => {
    const [oldKey, newer] = [newKey(), newKey()];
    const before = new SecretBox(oldKey);
    const sealedBefore = before.seal(secret, webhookId);
    const after = new SecretBox(newer, [oldKey]);
    expect(after.keyId).not.toBe(before.keyId);
    expect(after.open(sealedBefore, webhookId)).toBe(secret);
    expect(after.isCurrent(sealedBefore)).toBe(false);
    expect(after.isCurrent(after.seal(secret, webhookId))).toBe(true);
    expect(after.currentPattern).toBe(`kbsec:v1:${after.keyId}:%`);
  });

  it('takes only the base64 of 32 bytes as a key', () => {
    expect(isSecretKey(newKey())).toBe(true);
    expect(isSecretKey(randomBytes(16).toString('base64'))).toBe(false);
    expect(isSecretKey(randomBytes(48).toString('base64'))).toBe(false);
    expect(isSecretKey('not a key')).toBe(false);
    expect(() => new SecretBox('short')).toThrow(/WEBHOOK_SECRET_KEY/);
    expect(() => new SecretBox(newKey(), ['short'])).toThrow(/WEBHOOK_SECRET_PREVIOUS_KEYS/);
  });
});
