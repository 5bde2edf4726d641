export * from './blob-store';
export * from './s3-blob-store';
export * from './tokens';
