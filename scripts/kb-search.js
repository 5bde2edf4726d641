#!/usr/bin/env node
// A small gRPC client for kb.v1.KnowledgeBase/Search.
// Usage: KB_TOKEN=$(npx kb token --tenant acme --user me) node scripts/kb-search.js [--top-k 5] "query"
'use strict';
const { parseArgs } = require('node:util');
const { credentials, Metadata } = require('@grpc/grpc-js');
const { kbv1 } = require('@kb/contracts');

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    address: { type: 'string', default: process.env.KB_GRPC_ADDRESS ?? '127.0.0.1:50051' },
    token: { type: 'string', default: process.env.KB_TOKEN ?? '' },
    'top-k': { type: 'string', default: '5' },
  },
});
const query = positionals.join(' ');
if (!query || !values.token) {
  process.stderr.write(
    'usage: kb-search.js [--address host:port] [--token jwt | KB_TOKEN=jwt] [--top-k n] "query"\n',
  );
  process.exit(2);
}
const client = new kbv1.KnowledgeBaseClient(values.address, credentials.createInsecure());
const metadata = new Metadata();
metadata.set('authorization', `Bearer ${values.token}`);
client.search(
  kbv1.SearchRequest.fromPartial({ query, topK: Number(values['top-k']) }),
  metadata,
  (error, response) => {
    client.close();
    if (error) {
      process.stderr.write(`${error.code} ${error.details}\n`);
      process.exit(1);
    }
    process.stdout.write(`${JSON.stringify(response, null, 2)}\n`);
  },
);
