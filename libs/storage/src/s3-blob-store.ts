import { Readable } from 'node:stream';

import {
  CreateBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  NotFound,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';

import type { BlobStore, ByteRange } from './blob-store';

export interface S3Options {
  endpoint?: string;
  region: string;
  bucket: string;
  accessKeyId?: string;
  secretAccessKey?: string;
  /** Path-style addressing, needed by most S3-compatible servers. */
  forcePathStyle?: boolean;
}

export class S3BlobStore implements BlobStore {
  readonly bucket: string;
  private readonly client: S3Client;

  constructor(options: S3Options) {
    this.bucket = options.bucket;
    this.client = new S3Client({
      region: options.region,
      ...(options.endpoint ? { endpoint: options.endpoint } : {}),
      forcePathStyle: options.forcePathStyle ?? true,
      ...(options.accessKeyId && options.secretAccessKey
        ? {
            credentials: {
              accessKeyId: options.accessKeyId,
              secretAccessKey: options.secretAccessKey,
            },
          }
        : {}),
      // S3-compatible servers do not all accept the SDK's default CRC32 trailers.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
  }

  async ensureBucket(): Promise<void> {
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }));
    } catch (error) {
      if (!isNotFound(error)) throw error;
      try {
        await this.client.send(new CreateBucketCommand({ Bucket: this.bucket }));
      } catch (createError) {
        // Another replica created it first.
        if (!(
          createError instanceof S3ServiceException && createError.name.startsWith('BucketAlready')
        )) {
          throw createError;
        }
      }
    }
  }

  /** Streams the body; bodies over the part size go up as a multipart upload. */
  async put(key: string, body: Buffer | Readable | string, contentType?: string): Promise<void> {
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.bucket, Key: key, Body: body, ContentType: contentType },
      partSize: 8 * 1024 * 1024,
      queueSize: 2,
    });
    await upload.done();
  }

  async get(key: string): Promise<Buffer> {
    const response = await this.client.send(
      new GetObjectCommand({ Bucket: this.bucket, Key: key }),
    );
    if (!response.Body) throw new Error(`s3 object ${key} has no body`);
    return Buffer.from(await response.Body.transformToByteArray());
  }

  async openRead(key: string, range?: ByteRange): Promise<Readable> {
    const response = await this.client.send(
      new GetObjectCommand({
        Bucket: this.bucket,
        Key: key,
        ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}),
      }),
    );
    // In Node the SDK's body is the HTTP response itself: a Readable.
    if (!(response.Body instanceof Readable)) throw new Error(`s3 object ${key} has no body`);
    // A server that ignored the Range header answers the whole object from byte 0: refuse it
    // rather than serve the wrong bytes as the range.
    if (range && !response.ContentRange?.startsWith(`bytes ${range.start}-`)) {
      response.Body.destroy();
      throw new Error(`s3 object ${key}: the server did not answer the range ${range.start}-`);
    }
    return response.Body;
  }

  async exists(key: string): Promise<boolean> {
    try {
      await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return true;
    } catch (error) {
      if (isNotFound(error)) return false;
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
  }

  async list(prefix: string): Promise<string[]> {
    return (await this.listEntries(prefix)).map((entry) => entry.key);
  }

  /** `list` with each object's last write time (whole seconds, as S3 keeps it). */
  async listEntries(prefix: string): Promise<Array<{ key: string; lastModified: Date | null }>> {
    const entries: Array<{ key: string; lastModified: Date | null }> = [];
    let token: string | undefined;
    do {
      const page = await this.client.send(
        new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, ContinuationToken: token }),
      );
      // A key ending in `/` is a folder that servers over a file system list; it holds nothing.
      for (const { Key: key, LastModified: lastModified } of page.Contents ?? []) {
        if (key && !key.endsWith('/')) entries.push({ key, lastModified: lastModified ?? null });
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return entries.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  /**
   * One level under `prefix`, as a file browser shows it: the objects directly under it and the
   * `folders` (common prefixes up to the next `/`) below it.
   */
  async listLevel(prefix: string): Promise<{
    folders: string[];
    entries: Array<{ key: string; lastModified: Date | null }>;
  }> {
    const folders: string[] = [];
    const entries: Array<{ key: string; lastModified: Date | null }> = [];
    let token: string | undefined;
    do {
      const page = await this.client.send(
        new ListObjectsV2Command({
          Bucket: this.bucket,
          Prefix: prefix,
          Delimiter: '/',
          ContinuationToken: token,
        }),
      );
      for (const { Prefix: folder } of page.CommonPrefixes ?? []) if (folder) folders.push(folder);
      for (const { Key: key, LastModified: lastModified } of page.Contents ?? []) {
        if (key && !key.endsWith('/')) entries.push({ key, lastModified: lastModified ?? null });
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return { folders: folders.sort(), entries };
  }

  async ping(): Promise<void> {
    await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }));
  }

  destroy(): void {
    this.client.destroy();
  }
}

function isNotFound(error: unknown): boolean {
  return (
    error instanceof NotFound ||
    (error instanceof S3ServiceException &&
      (error.$metadata.httpStatusCode === 404 ||
        error.name === 'NoSuchKey' ||
        error.name === 'NotFound'))
  );
}

/** Builds the store from the shared S3 settings (see `s3ConfigSchema` in @kb/config). */
export function s3BlobStoreFromEnv(config: {
  S3_ENDPOINT?: string | undefined;
  S3_REGION: string;
  S3_BUCKET: string;
  S3_ACCESS_KEY_ID?: string | undefined;
  S3_SECRET_ACCESS_KEY?: string | undefined;
}): S3BlobStore {
  return new S3BlobStore({
    ...(config.S3_ENDPOINT ? { endpoint: config.S3_ENDPOINT } : {}),
    region: config.S3_REGION,
    bucket: config.S3_BUCKET,
    ...(config.S3_ACCESS_KEY_ID ? { accessKeyId: config.S3_ACCESS_KEY_ID } : {}),
    ...(config.S3_SECRET_ACCESS_KEY ? { secretAccessKey: config.S3_SECRET_ACCESS_KEY } : {}),
  });
}
