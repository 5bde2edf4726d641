import { isGranted, sourceAllowlistSetting } from './source-grants';

describe('source grants (SOURCE_ALLOWLIST)', () => {
  const allowlist = sourceAllowlistSetting.parse(
    JSON.stringify({
      acme: [
        { bucket: 'acme-handbook' },
        { bucket: 'shared-drop', prefix: 'acme/' },
        { bucket: 'kb-documents' },
      ],
    }),
  );
  const granted = (tenant: string, bucket: string, prefix = '') =>
    isGranted(allowlist, 'kb-documents', tenant, bucket, prefix);

  it('grants nothing by default', () => {
    expect(sourceAllowlistSetting.parse(undefined)).toEqual({});
    expect(isGranted({}, 'kb-documents', 'acme', 'acme-handbook', '')).toBe(false);
  });

  it('grants a whole bucket, and any prefix in it', () => {
    expect(granted('acme', 'acme-handbook')).toBe(true);
    expect(granted('acme', 'acme-handbook', 'any/where/')).toBe(true);
  });

  it('grants a prefix and what lies below it, not the bucket around it', () => {
    expect(granted('acme', 'shared-drop', 'acme/')).toBe(true);
    expect(granted('acme', 'shared-drop', 'acme/policies/')).toBe(true);
    expect(granted('acme', 'shared-drop', '')).toBe(false);
    expect(granted('acme', 'shared-drop', 'acme')).toBe(false);
    expect(granted('acme', 'shared-drop', 'globex/')).toBe(false);
  });

  it("grants nothing of one tenant's to another", () => {
    expect(granted('globex', 'acme-handbook')).toBe(false);
  });

  it('never grants the documents bucket, even when listed', () => {
    expect(granted('acme', 'kb-documents')).toBe(false);
  });

  it('refuses a list that is not JSON or not grants', () => {
    expect(sourceAllowlistSetting.safeParse('{acme:').success).toBe(false);
    expect(sourceAllowlistSetting.safeParse('{"acme":[{"bucket":"Bad_Name"}]}').success).toBe(
      false,
    );
    expect(sourceAllowlistSetting.safeParse('{"acme":[{"bucket":"a-b","role":"x"}]}').success).toBe(
      false,
    );
  });
});
