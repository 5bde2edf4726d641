import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { localToken } from '@kb/kb-cli/api';
import type { Command } from 'commander';

import { launcher } from '../launcher/services.launcher';

/** Schemathesis failure codes counted as server errors; every other failure is a schema violation. */
const SERVER_ERRORS = new Set(['ST101']);
const CHECKS = [
  'not_a_server_error',
  'status_code_conformance',
  'content_type_conformance',
  'response_schema_conformance',
].join(',');

/** The parts of schemathesis's JSON report that are counted. */
export interface SchemathesisReport {
  failures: Array<{ code: string; count: number }>;
  operations: { tested: number };
  test_cases: { generated: number };
  errors: unknown[];
}

export interface ServiceOutcome {
  operations: number;
  test_cases: number;
  server_errors: number;
  schema_violations: number;
  errors: number;
}

/** One service's report in the figures the summary adds up. */
export function outcomeOf(report: SchemathesisReport): ServiceOutcome {
  let serverErrors = 0;
  let violations = 0;
  for (const failure of report.failures) {
    if (SERVER_ERRORS.has(failure.code)) serverErrors += failure.count;
    else violations += failure.count;
  }
  return {
    operations: report.operations.tested,
    test_cases: report.test_cases.generated,
    server_errors: serverErrors,
    schema_violations: violations,
    errors: report.errors.length,
  };
}

interface FuzzOptions {
  schemathesis: string;
  maxExamples: string;
  services: string[];
  reportDir: string;
}

async function hasOpenApi(url: string): Promise<boolean> {
  const response = await fetch(`${url}/openapi.json`).catch(() => undefined);
  return response?.ok === true;
}

/**
 * schemathesis against each REST service's /openapi.json with an admin token of a fresh tenant;
 * one JSON line `{"fuzz":{"services":{...},"test_cases":n,"server_errors":n,"schema_violations":n}}`.
 */
async function runFuzz(options: FuzzOptions): Promise<boolean> {
  mkdirSync(options.reportDir, { recursive: true });
  const bearer = await localToken({
    tenant: `fuzz-${randomUUID().slice(0, 8)}`,
    user: 'fuzzer',
    roles: ['admin', 'editor'],
  });
  const summary = {
    services: {} as Record<string, ServiceOutcome | string>,
    test_cases: 0,
    server_errors: 0,
    schema_violations: 0,
  };
  const wanted = launcher.SERVICES.filter((s) =>
    options.services.includes(s.name.replace('-service', '')),
  );
  for (const service of wanted) {
    const url = `http://127.0.0.1:${service.port}`;
    if (!(await hasOpenApi(url))) {
      summary.services[service.name] = 'no OpenAPI document';
      continue;
    }
    const report = join(options.reportDir, `${service.name}.json`);
    const run = spawnSync(
      options.schemathesis,
      [
        'run',
        `${url}/openapi.json`,
        '--header',
        `Authorization: Bearer ${bearer}`,
        '--checks',
        CHECKS,
        '--max-examples',
        options.maxExamples,
        '--phases',
        'examples,coverage,fuzzing',
        '--no-color',
        '--report',
        'json',
        '--report-json-path',
        report,
      ],
      // Its example database (.schemathesis/) goes beside the reports, not into the repository.
      { stdio: ['ignore', 'inherit', 'inherit'], cwd: options.reportDir },
    );
    if (!existsSync(report)) throw new Error(`schemathesis wrote no report (exit ${run.status})`);
    const outcome = outcomeOf(JSON.parse(readFileSync(report, 'utf8')) as SchemathesisReport);
    summary.services[service.name] = outcome;
    summary.test_cases += outcome.test_cases;
    summary.server_errors += outcome.server_errors;
    summary.schema_violations += outcome.schema_violations + outcome.errors;
  }
  process.stdout.write(`${JSON.stringify({ fuzz: summary })}\n`);
  return summary.server_errors + summary.schema_violations === 0;
}

/** `kb-tools fuzz` (`npm run fuzz`, which installs schemathesis and starts the services). */
export function registerFuzzCommand(program: Command): void {
  program
    .command('fuzz')
    .description(
      "Property-based fuzzing of each REST service's API with schemathesis, driven by its /openapi.json; prints one JSON object, exits 1 when anything failed.",
    )
    .option(
      '--schemathesis <binary>',
      'the schemathesis binary (npm run fuzz sets KB_SCHEMATHESIS)',
      process.env['KB_SCHEMATHESIS'] ?? 'schemathesis',
    )
    .option(
      '--max-examples <n>',
      'examples per operation',
      process.env['KB_FUZZ_MAX_EXAMPLES'] ?? '60',
    )
    .option(
      '--services <names>',
      'services to fuzz, space- or comma-separated',
      process.env['KB_FUZZ_SERVICES'] ?? 'document query acl embedding webhook',
    )
    .option(
      '--report-dir <folder>',
      'where the JSON reports go, one per service',
      join(process.env['KB_LOG_DIR'] ?? '.', 'fuzz'),
    )
    .action(
      async (options: {
        schemathesis: string;
        maxExamples: string;
        services: string;
        reportDir: string;
      }) => {
        const passed = await runFuzz({
          ...options,
          services: options.services.split(/[\s,]+/).filter(Boolean),
        });
        if (!passed) process.exitCode = 1;
      },
    );
}
