import { availableParallelism } from 'node:os';

import { withMachineState } from './machine';

describe('withMachineState', () => {
  it("adds the CPU count and the run's load averages to the result", async () => {
    const result = await withMachineState(async () => ({ figure: 1 }), 5);
    expect(result.figure).toBe(1);
    expect(result.machine.cpus).toBe(availableParallelism());
    const { start, end, max } = result.machine.load_average_1m;
    expect(max).toBeGreaterThanOrEqual(Math.max(start, end));
    expect(start).toBeGreaterThanOrEqual(0);
  });

  it('passes a failed run on', async () => {
    await expect(
      withMachineState(async () => {
        throw new Error('services down');
      }),
    ).rejects.toThrow('services down');
  });
});
