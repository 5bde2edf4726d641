import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/** What a sealed secret starts with; a stored secret without it is a plaintext one from before. */
const PREFIX = 'kbsec:v1:';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** A key of WEBHOOK_SECRET_KEY's shape: the base64 of exactly 32 bytes. */
export const isSecretKey = (value: string): boolean =>
  /^[A-Za-z0-9+/]{43}=$/.test(value) && Buffer.from(value, 'base64').length === 32;

/** Why a stored secret could not be read; names the key id, never the secret. */
export class SecretUnreadableError extends Error {}

/**
 * Envelope encryption of the subscriptions' signing secrets at rest (review N11), with a key that
 * only webhook-service holds (WEBHOOK_SECRET_KEY, 32 bytes, base64). A secret is stored as
 * `kbsec:v1:<key id>:<base64 of iv, ciphertext, tag>` (AES-256-GCM, a random 96-bit iv per
 * seal), bound to its subscription's id as additional data, so a sealed secret copied onto
 * another row does not open. The key id (the first 12 hex digits of a SHA-256 of the key) says
 * which key sealed it, so keys rotate: the previous keys (WEBHOOK_SECRET_PREVIOUS_KEYS) still
 * open, the current one seals, and `WebhookSecretSealer` re-seals what an older key sealed.
 * A stored value without the prefix is a plaintext secret from before encryption (`whsec_…`): it
 * still opens, as itself, until the sealer seals it.
 */
export class SecretBox {
  /** The id of the key that seals. */
  readonly keyId: string;
  private readonly keys = new Map<string, Buffer>();

  constructor(key: string, previousKeys: readonly string[] = []) {
    for (const [index, encoded] of [key, ...previousKeys].entries()) {
      if (!isSecretKey(encoded)) {
        throw new Error(
          `${index === 0 ? 'WEBHOOK_SECRET_KEY' : 'WEBHOOK_SECRET_PREVIOUS_KEYS'}: not the base64 of 32 bytes`,
        );
      }
      const bytes = Buffer.from(encoded, 'base64');
      const id = keyIdOf(bytes);
      if (!this.keys.has(id)) this.keys.set(id, bytes);
    }
    this.keyId = keyIdOf(Buffer.from(key, 'base64'));
  }

  /** The secret sealed with the current key, for the subscription `webhookId`. */
  seal(secret: string, webhookId: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.keys.get(this.keyId)!, iv);
    cipher.setAAD(aadOf(webhookId));
    const sealed = Buffer.concat([
      iv,
      cipher.update(secret, 'utf8'),
      cipher.final(),
      cipher.getAuthTag(),
    ]);
    return `${PREFIX}${this.keyId}:${sealed.toString('base64')}`;
  }

  /** The secret a stored value holds; throws `SecretUnreadableError` when it cannot be opened. */
  open(stored: string, webhookId: string): string {
    if (!stored.startsWith(PREFIX)) return stored;
    const [keyId, payload] = stored.slice(PREFIX.length).split(':');
    const key = keyId ? this.keys.get(keyId) : undefined;
    if (!key || !payload) {
      throw new SecretUnreadableError(
        `the signing secret of webhook ${webhookId} was sealed with key ${keyId ?? '?'}, which is neither WEBHOOK_SECRET_KEY nor in WEBHOOK_SECRET_PREVIOUS_KEYS`,
      );
    }
    const sealed = Buffer.from(payload, 'base64');
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, IV_BYTES));
      decipher.setAAD(aadOf(webhookId));
      decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
      return Buffer.concat([
        decipher.update(sealed.subarray(IV_BYTES, sealed.length - TAG_BYTES)),
        decipher.final(),
      ]).toString('utf8');
    } catch {
      throw new SecretUnreadableError(
        `the signing secret of webhook ${webhookId} does not open with key ${keyId}: altered, or not this subscription's`,
      );
    }
  }

  /** Whether a stored value is sealed with the current key (else the sealer re-seals it). */
  isCurrent(stored: string): boolean {
    return stored.startsWith(`${PREFIX}${this.keyId}:`);
  }

  /** The LIKE pattern of values sealed with the current key. */
  get currentPattern(): string {
    return `${PREFIX}${this.keyId}:%`;
  }
}

function keyIdOf(key: Buffer): string {
  return createHash('sha256')
    .update('kb webhook secret key id\0')
    .update(key)
    .digest('hex')
    .slice(0, 12);
}

const aadOf = (webhookId: string): Buffer => Buffer.from(`kb-webhook-secret:${webhookId}`, 'utf8');
