#!/usr/bin/env node

import { Command } from 'commander';

import { registerBenchCommands } from './bench/bench.commands';
import { registerChaosCommand } from './chaos/chaos.command';
import { registerEvalCommand } from './eval/eval.commands';
import { registerPiiEvalCommand } from './eval/pii-eval.commands';
import { registerRerankEvalCommand } from './eval/rerank-eval.commands';
import { registerFuzzCommand } from './fuzz/fuzz.command';

const program = new Command('kb-tools').description(
  'Benchmarks, evaluations, fuzzing and fault injection against running services (npm run bench|eval|fuzz|chaos).',
);

for (const register of [
  registerBenchCommands,
  registerEvalCommand,
  registerRerankEvalCommand,
  registerPiiEvalCommand,
  registerFuzzCommand,
  registerChaosCommand,
]) {
  register(program);
}

program.parseAsync().catch((error: unknown) => {
  process.stderr.write(`kb-tools: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
