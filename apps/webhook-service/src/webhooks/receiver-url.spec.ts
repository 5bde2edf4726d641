import { isPublicAddress, validateReceiverUrl } from './receiver-url';
import { WebhookErrorCode } from './webhooks.errors';

const strict = (resolved: Record<string, string[]> = {}) => ({
  allowPrivate: false,
  resolve: async (host: string) => {
    const found = resolved[host];
    if (!found) throw new Error('ENOTFOUND');
    return found;
  },
});

const rejects = (url: string, options: Parameters<typeof validateReceiverUrl>[1], text: RegExp) =>
  expect(validateReceiverUrl(url, options)).rejects.toMatchObject({
    code: WebhookErrorCode.InvalidUrl,
    message: expect.stringMatching(text),
  });

describe('receiver URLs', () => {
  it.each([
    '127.0.0.1',
    '10.1.2.3',
    '172.16.0.1',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '::1',
    'fd00::1',
    'fe80::1',
    '::ffff:127.0.0.1',
  ])('treats %s as non-public', (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });

  it.each(['8.8.8.8', '2606:4700:4700::1111', '::ffff:8.8.8.8'])('treats %s as public', (a) => {
    expect(isPublicAddress(a)).toBe(true);
  });

  it('accepts public http and https receivers', async () => {
    const options = strict({ 'hooks.example.com': ['93.184.216.34'] });
    await expect(validateReceiverUrl('https://hooks.example.com/kb', options)).resolves.toEqual(
      new URL('https://hooks.example.com/kb'),
    );
    await expect(validateReceiverUrl('http://8.8.8.8:8080/x', options)).resolves.toBeInstanceOf(
      URL,
    );
  });

  it('refuses other schemes, credentials, fragments and malformed URLs', async () => {
    await rejects('ftp://example.com/', strict(), /http or https/);
    await rejects('file:///etc/passwd', strict(), /http or https/);
    await rejects('https://user:pw@example.com/', strict(), /credentials/);
    await rejects('https://example.com/#x', strict(), /fragment/);
    await rejects('not a url', strict(), /valid absolute URL/);
  });

  it('refuses loopback, private and metadata addresses, literal or resolved', async () => {
    await rejects('http://127.0.0.1:9000/', strict(), /non-public/);
    await rejects('http://[::1]/', strict(), /non-public/);
    await rejects('http://169.254.169.254/latest/meta-data', strict(), /non-public/);
    await rejects('http://localhost/', strict({ localhost: ['127.0.0.1'] }), /at 127.0.0.1/);
    // One private address among public ones is enough to refuse the name.
    await rejects(
      'https://mixed.example/',
      strict({ 'mixed.example': ['93.184.216.34', '10.0.0.5'] }),
      /at 10.0.0.5/,
    );
    await rejects('https://nowhere.invalid/', strict(), /does not resolve/);
  });

  it('allows private receivers when the switch is on (tests, local runs)', async () => {
    await expect(
      validateReceiverUrl('http://127.0.0.1:9000/hook', { allowPrivate: true }),
    ).resolves.toBeInstanceOf(URL);
    // The scheme is still checked.
    await rejects('gopher://127.0.0.1/', { allowPrivate: true }, /http or https/);
  });
});
