// `npm run fuzz`'s runner (scripts/fuzz.sh starts the servers and the services): schemathesis
// against each REST service's /openapi.json with an admin token of a fresh tenant, then one JSON
// line: {"fuzz":{"services":{...},"test_cases":n,"server_errors":n,"schema_violations":n}}.
// Exit code 1 when anything failed. Reports (JSON, one per service) go to $KB_LOG_DIR/fuzz/.
'use strict';
const { spawnSync } = require('node:child_process');
const { randomUUID } = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');

const { SERVICES } = require('./lib/services');

/** Schemathesis failure codes counted as server errors; every other failure is a schema violation. */
const SERVER_ERRORS = new Set(['ST101']);
const CHECKS = [
  'not_a_server_error',
  'status_code_conformance',
  'content_type_conformance',
  'response_schema_conformance',
].join(',');

function token(tenant) {
  const cli = path.join(__dirname, '..', 'apps', 'kb-cli', 'dist', 'main.js');
  const out = spawnSync(
    process.execPath,
    [cli, 'token', '--tenant', tenant, '--user', 'fuzzer', '--roles', 'admin,editor'],
    { encoding: 'utf8' },
  );
  if (out.status !== 0) throw new Error(`kb token failed: ${out.stderr}`);
  return out.stdout.trim();
}

async function hasOpenApi(url) {
  const response = await fetch(`${url}/openapi.json`).catch(() => undefined);
  return response?.ok === true;
}

async function main() {
  const schemathesis = process.env.KB_SCHEMATHESIS ?? 'schemathesis';
  const maxExamples = process.env.KB_FUZZ_MAX_EXAMPLES ?? '60';
  const wanted = (process.env.KB_FUZZ_SERVICES ?? 'document query acl embedding webhook').split(
    /\s+/,
  );
  const reportDir = path.join(process.env.KB_LOG_DIR ?? '.', 'fuzz');
  fs.mkdirSync(reportDir, { recursive: true });
  const bearer = token(`fuzz-${randomUUID().slice(0, 8)}`);
  const summary = { services: {}, test_cases: 0, server_errors: 0, schema_violations: 0 };
  for (const service of SERVICES.filter((s) => wanted.includes(s.name.replace('-service', '')))) {
    const url = `http://127.0.0.1:${service.port}`;
    if (!(await hasOpenApi(url))) {
      summary.services[service.name] = 'no OpenAPI document';
      continue;
    }
    const report = path.join(reportDir, `${service.name}.json`);
    const run = spawnSync(
      schemathesis,
      [
        'run',
        `${url}/openapi.json`,
        '--header',
        `Authorization: Bearer ${bearer}`,
        '--checks',
        CHECKS,
        '--max-examples',
        maxExamples,
        '--phases',
        'examples,coverage,fuzzing',
        '--no-color',
        '--report',
        'json',
        '--report-json-path',
        report,
      ],
      // Its example database (.schemathesis/) goes beside the reports, not into the repository.
      { stdio: ['ignore', 'inherit', 'inherit'], cwd: reportDir },
    );
    if (!fs.existsSync(report))
      throw new Error(`schemathesis wrote no report (exit ${run.status})`);
    const result = JSON.parse(fs.readFileSync(report, 'utf8'));
    const failures = { server_errors: 0, schema_violations: 0 };
    for (const failure of result.failures) {
      const kind = SERVER_ERRORS.has(failure.code) ? 'server_errors' : 'schema_violations';
      failures[kind] += failure.count;
    }
    summary.services[service.name] = {
      operations: result.operations.tested,
      test_cases: result.test_cases.generated,
      ...failures,
      errors: result.errors.length,
    };
    summary.test_cases += result.test_cases.generated;
    summary.server_errors += failures.server_errors;
    summary.schema_violations += failures.schema_violations + result.errors.length;
  }
  process.stdout.write(`${JSON.stringify({ fuzz: summary })}\n`);
  process.exit(summary.server_errors + summary.schema_violations > 0 ? 1 : 0);
}

main().catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exit(1);
});
