import { totalmem } from 'node:os';

import { LEXICAL_MEMORY_FLOOR, lexicalMemoryLimits, processMemoryBytes } from './memory-limits';

const GiB = 1024 ** 3;

describe('lexicalMemoryLimits (LEXICAL_MEMORY_* = auto)', () => {
  it('keeps the floor of chunks for a 1 GiB pod, and 128 MiB of postings', () => {
    expect(lexicalMemoryLimits(1 * GiB)).toEqual({
      chunks: LEXICAL_MEMORY_FLOOR.chunks,
      postings: (128 * 1024 ** 2) / 8,
    });
  });

  it('holds a million-chunk space with its postings on a 24 GiB machine', () => {
    const limits = lexicalMemoryLimits(24 * GiB);
    // A quarter of 24 GiB, half each: 3 GiB / 1,500 bytes a chunk, 3 GiB / 8 bytes a posting.
    expect(limits.chunks).toBe(Math.floor((3 * GiB) / 1_500));
    expect(limits.postings).toBe(Math.floor((3 * GiB) / 8));
    expect(limits.chunks).toBeGreaterThan(1_000_000);
    expect(limits.postings).toBeGreaterThan(50_000_000);
  });

  it('grows with memory, never below the floor', () => {
    const small = lexicalMemoryLimits(4 * GiB);
    const large = lexicalMemoryLimits(16 * GiB);
    expect(large.chunks).toBeGreaterThan(small.chunks);
    expect(small.chunks).toBeGreaterThanOrEqual(LEXICAL_MEMORY_FLOOR.chunks);
    expect(lexicalMemoryLimits(0)).toEqual(LEXICAL_MEMORY_FLOOR);
  });
});

describe('processMemoryBytes', () => {
  it("is a positive size no larger than the machine's", () => {
    const bytes = processMemoryBytes();
    expect(bytes).toBeGreaterThan(0);
    expect(bytes).toBeLessThanOrEqual(totalmem());
  });
});
