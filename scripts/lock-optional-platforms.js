#!/usr/bin/env node
// Completes package-lock.json with the other platforms' optional native packages (swc, buf,
// resolver bindings, …). The registry mirror this project is developed against serves only the
// linux-x64 builds, so `npm install` cannot record the rest, and `npm ci` then refuses the lock as
// out of sync. Each added entry carries the os/cpu its name encodes, so npm skips it on other
// machines and fetches it by name on the platform it belongs to.
// Run after `npm install` changes the lock: `node scripts/lock-optional-platforms.js`.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const OS = [
  'darwin',
  'linux',
  'win32',
  'android',
  'freebsd',
  'openbsd',
  'netbsd',
  'sunos',
  'aix',
  'openharmony',
  'wasm32',
];
const CPU = {
  arm64: 'arm64',
  aarch64: 'arm64',
  x64: 'x64',
  ia32: 'ia32',
  armv7: 'arm',
  arm: 'arm',
  ppc64: 'ppc64',
  s390x: 's390x',
  riscv64: 'riscv64',
  loong64: 'loong64',
  wasm32: 'wasm32',
  universal: null,
};

const lockPath = path.resolve(__dirname, '..', 'package-lock.json');
const lock = JSON.parse(fs.readFileSync(lockPath, 'utf8'));
let added = 0;
for (const [location, entry] of Object.entries(lock.packages)) {
  for (const [name, range] of Object.entries(entry.optionalDependencies ?? {})) {
    const base = location === '' ? '' : `${location}/`;
    const candidates = [`${base}node_modules/${name}`, `node_modules/${name}`];
    if (candidates.some((c) => lock.packages[c])) continue;
    const parts = name.split('/').pop().split('-');
    const os = OS.find((o) => parts.includes(o));
    const cpuKey = Object.keys(CPU).find((c) => parts.includes(c));
    if (!os && !cpuKey) continue; // not a platform package: leave npm's view alone
    lock.packages[`node_modules/${name}`] = {
      version: range.replace(/^[\^~=]/, ''),
      cpu: cpuKey && CPU[cpuKey] ? [CPU[cpuKey]] : undefined,
      optional: true,
      os: os && os !== 'wasm32' ? [os] : undefined,
    };
    added++;
  }
}
const sorted = Object.fromEntries(
  Object.entries(lock.packages).sort(([a], [b]) =>
    a === '' ? -1 : b === '' ? 1 : a.localeCompare(b),
  ),
);
lock.packages = sorted;
fs.writeFileSync(lockPath, `${JSON.stringify(lock, null, 2)}\n`);
process.stdout.write(`lock: added ${added} optional platform entries\n`);
