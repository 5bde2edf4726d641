import { availableParallelism, loadavg } from 'node:os';

/** The machine a bench ran on, and how busy it was: figures from a loaded machine mean less. */
export interface MachineState {
  cpus: number;
  /** The one-minute load average when the run started and ended, and the highest seen in between. */
  load_average_1m: { start: number; end: number; max: number };
}

const round = (x: number): number => Math.round(x * 100) / 100;

/**
 * Runs a bench and adds `machine` to its result: the CPU count and the one-minute load average
 * (sampled every `everyMs` while it runs). A load well above the CPU count means other work
 * shared the machine.
 */
export async function withMachineState<T extends object>(
  run: () => Promise<T>,
  everyMs = 5_000,
): Promise<T & { machine: MachineState }> {
  const start = loadavg()[0]!;
  let max = start;
  const sampler = setInterval(() => {
    max = Math.max(max, loadavg()[0]!);
  }, everyMs);
  sampler.unref();
  try {
    const result = await run();
    const end = loadavg()[0]!;
    return {
      ...result,
      machine: {
        cpus: availableParallelism(),
        load_average_1m: { start: round(start), end: round(end), max: round(Math.max(max, end)) },
      },
    };
  } finally {
    clearInterval(sampler);
  }
}
