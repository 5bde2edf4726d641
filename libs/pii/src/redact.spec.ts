import { redact } from './redact';

describe('redact', () => {
  const text = 'Write to jane.doe@example.com, card 4111 1111 1111 1111. End.';

  it('replaces each finding with its placeholder and keeps the rest', () => {
    const redaction = redact(text);
    expect(redaction.text).toBe('Write to [EMAIL], card [CARD]. End.');
    expect(redaction.summary).toEqual({ email: 1, card: 1 });
    expect(redaction.findings.map((f) => f.type)).toEqual(['email', 'card']);
  });

  it('maps offsets of the original text into the redacted one', () => {
    const { text: redacted, toRedacted } = redact(text);
    const at = (s: string) => text.indexOf(s);
    expect(toRedacted(0)).toBe(0);
    expect(redacted.slice(toRedacted(at(', card')))).toMatch(/^, card \[CARD\]/);
    expect(redacted.slice(toRedacted(at('End.')))).toBe('End.');
    expect(toRedacted(text.length)).toBe(redacted.length);
    // Inside a finding: its placeholder's start, or its end for an end offset.
    const inside = at('doe@');
    expect(toRedacted(inside)).toBe(redacted.indexOf('[EMAIL]'));
    expect(toRedacted(inside, { end: true })).toBe(redacted.indexOf('[EMAIL]') + 7);
  });

  it('returns the text unchanged when there is nothing to redact', () => {
    const redaction = redact('Nothing here but 42 and 2024-01-15.');
    expect(redaction.text).toBe('Nothing here but 42 and 2024-01-15.');
    expect(redaction.toRedacted(10)).toBe(10);
  });
});
