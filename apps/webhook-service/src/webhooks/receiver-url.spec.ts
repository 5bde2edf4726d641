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

  // Review N10: public-range platform endpoints and IPv6 forms that ipaddr.js calls unicast.
  it.each([
    // Azure WireServer (and host DNS and health probes), in a public range.
    '168.63.129.16',
    '::ffff:168.63.129.16',
    '::ffff:a83f:8110',
    // IPv4-compatible ::a.b.c.d (::/96, deprecated), in dotted and in hex form.
    '::8.8.8.8',
    '::127.0.0.1',
    '::7f00:1',
    '::a9fe:a9fe',
    '::a00:1',
    // Local-use NAT64 (64:ff9b:1::/48, RFC 8215): a gateway inside the network.
    '64:ff9b:1::a9fe:a9fe',
    '64:ff9b:1:ffff::808:808',
  ])('treats %s as non-public (deny list)', (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });

  it.each(['168.63.129.17', '2606:4700:4700::1111', '64:ff9b:0:1::1'])(
    'still treats %s as public',
    (address) => {
      expect(isPublicAddress(address)).toBe(true);
    },
  );

  it('refuses the deny list literal or resolved', async () => {
    await rejects('http://168.63.129.16/machine?comp=goalstate', strict(), /non-public/);
    // The URL parser writes [::127.0.0.1] as [::7f00:1].
    await rejects('http://[::127.0.0.1]:8080/', strict(), /non-public/);
    await rejects('http://[::a9fe:a9fe]/latest/meta-data', strict(), /non-public/);
    await rejects('http://[64:ff9b:1::a9fe:a9fe]/', strict(), /non-public/);
    await rejects(
      'https://wire.example/',
      strict({ 'wire.example': ['168.63.129.16'] }),
      /at 168.63.129.16/,
    );
    await rejects(
      'https://compat.example/',
      strict({ 'compat.example': ['93.184.216.34', '::a00:5'] }),
      /at ::a00:5/,
    );
  });

  it('allows private receivers when the switch is on (tests, local runs)', async () => {
    await expect(
      validateReceiverUrl('http://127.0.0.1:9000/hook', { allowPrivate: true }),
    ).resolves.toBeInstanceOf(URL);
    // The scheme is still checked.
    await rejects('gopher://127.0.0.1/', { allowPrivate: true }, /http or https/);
  });
});
