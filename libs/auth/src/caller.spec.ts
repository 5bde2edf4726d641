import { parseGrantPrincipal, principal } from './caller';

describe('grant principals (ADR 54)', () => {
  it('name their member and end, and read back', () => {
    const end = new Date('2026-12-01T00:00:00Z');
    const p = principal.grant('u:bob@example.com', end);
    expect(p).toBe('x:u:bob@example.com@2026-12-01T00:00:00.000Z');
    expect(parseGrantPrincipal(p)).toEqual({ member: 'u:bob@example.com', expiresAt: end });
    expect(parseGrantPrincipal(principal.grant('g:eng', end))).toEqual({
      member: 'g:eng',
      expiresAt: end,
    });
  });

  it('are nothing else', () => {
    for (const p of [
      'u:bob',
      't:*',
      'x:r:editor@2026-12-01T00:00:00.000Z',
      'x:u:bob@tomorrow',
      'x:u:bob@2026-12-01T00:00:00Z',
    ]) {
      expect(parseGrantPrincipal(p)).toBeUndefined();
    }
  });
});
