import { leaseQueueConformance } from '@kb/jobs/test/support/lease-queue.conformance';

import { MemoryLeaseQueue } from './memory-lease-queue';

type Job = { id: string; payload: null };

describe('MemoryLeaseQueue', () => {
  leaseQueueConformance<Job>(async () => {
    const queue = new MemoryLeaseQueue<null>();
    return Promise.resolve({
      queue,
      add: async (count) => Promise.resolve(Array.from({ length: count }, () => queue.add(null))),
      idOf: (job) => job.id,
      finish: async (job) => Promise.resolve(queue.finish(job.id)),
      elapse: async (ms) => Promise.resolve(void (queue.now += ms)),
    });
  });
});
