import { baseUrlProblem } from '../../modules/catalog/provider/base-url-policy.js';
import { type AddressCategory, addressRefusal, classifyAddress, classifyHost } from '../../modules/catalog/provider/outbound-address-policy.js';

/** Which addresses a provider may be reached at (DESIGN §10), judged on literals, names and configured base URLs. */
describe('outbound address policy', () => {
  test.each<[string, AddressCategory]>([
    ['8.8.8.8', 'public'],
    ['2606:4700:4700::1111', 'public'],
    ['169.254.169.254', 'metadata'],
    ['169.254.170.2', 'metadata'],
    ['100.100.100.200', 'metadata'],
    ['168.63.129.16', 'metadata'],
    ['fd00:ec2::254', 'metadata'],
    ['169.254.10.1', 'link-local'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['::1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['172.32.0.1', 'public'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'private'],
    ['100.127.255.255', 'private'],
    ['198.18.0.1', 'private'],
    ['fc00::1', 'private'],
    ['fd12:3456::1', 'private'],
    ['0.0.0.0', 'reserved'],
    ['::', 'reserved'],
    ['255.255.255.255', 'reserved'],
    ['224.0.0.1', 'reserved'],
    ['ff02::1', 'reserved'],
    ['192.0.2.10', 'reserved'],
    ['2001:db8::1', 'reserved'],
    // IPv4 embedded in IPv6 is judged as the IPv4 address it reaches.
    ['::ffff:169.254.169.254', 'metadata'],
    ['::ffff:a9fe:a9fe', 'metadata'],
    ['[::ffff:a9fe:a9fe]', 'metadata'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:8.8.8.8', 'public'],
    ['::ffff:0:a9fe:a9fe', 'metadata'],
    ['::a9fe:a9fe', 'metadata'],
    ['64:ff9b::a9fe:a9fe', 'metadata'],
    ['64:ff9b::7f00:1', 'loopback'],
    ['64:ff9b:1::a00:1', 'private'],
    ['2002:a9fe:a9fe::1', 'metadata'],
    ['2002:0808:0808::1', 'public'],
  ])('%s is %s', (address, category) => {
    expect(classifyAddress(address)).toBe(category);
  });

  test.each<[string, AddressCategory]>([
    ['api.openai.com', 'public'],
    ['metadata.google.internal', 'metadata'],
    ['metadata.google.internal.', 'metadata'],
    ['METADATA.GOOGLE.INTERNAL', 'metadata'],
    ['metadata', 'metadata'],
    ['169.254.169.254.nip.io', 'metadata'],
    ['app.169.254.169.254.sslip.io', 'metadata'],
    ['169-254-169-254.sslip.io', 'metadata'],
    ['10-0-0-1.nip.io', 'private'],
    ['127.0.0.1.nip.io', 'loopback'],
    ['localhost', 'loopback'],
    ['api.localhost', 'loopback'],
    ['anything.localtest.me', 'loopback'],
    ['vllm', 'private'],
    ['llm.internal', 'private'],
    ['ollama.svc.cluster.local', 'private'],
    ['8.8.8.8.nip.io', 'public'],
  ])('host %s is %s', (host, category) => {
    expect(classifyHost(host)).toBe(category);
  });

  test('metadata and reserved addresses are never allowed; private ranges only with allowPrivateNetwork', () => {
    for (const allow of [false, true]) {
      expect(addressRefusal('metadata', allow)).toMatch(/metadata/);
      expect(addressRefusal('reserved', allow)).toMatch(/reserved/);
      expect(addressRefusal('public', allow)).toBeNull();
    }
    for (const category of ['loopback', 'private', 'link-local'] as const) {
      expect(addressRefusal(category, false)).toMatch(/allowPrivateNetwork/);
      expect(addressRefusal(category, true)).toBeNull();
    }
  });

  describe('configured base URLs', () => {
    const bypasses = [
      'http://[::ffff:169.254.169.254]/',
      'http://[::ffff:a9fe:a9fe]/',
      'http://169.254.169.254.nip.io/',
      'http://metadata.google.internal./',
      'http://2852039166/',
      'http://0xa9fea9fe/',
      'http://0251.0376.0251.0376/',
      'http://[64:ff9b::a9fe:a9fe]/',
      'http://[fd00:ec2::254]/latest',
      'http://0.0.0.0:8080/',
    ];
    test.each(bypasses)('%s is refused even with allowPrivateNetwork', (url) => {
      expect(baseUrlProblem(url, false)).toMatch(/never allowed/);
      expect(baseUrlProblem(url, true)).toMatch(/never allowed/);
    });

    test.each([
      'http://127.0.0.1:8000/v1', 'http://[::1]:8000/v1', 'http://localhost:11434/v1', 'http://[::ffff:127.0.0.1]:8000/', 'http://10.0.0.5/v1',
      'http://192.168.1.20:8080/v1', 'http://100.64.1.1/v1', 'http://[fd12::1]/v1', 'http://169.254.10.1/v1', 'http://vllm:8000/v1',
      'http://ollama.svc.cluster.local/v1',
    ])('%s needs allowPrivateNetwork', (url) => {
      expect(baseUrlProblem(url, false)).toMatch(/allowPrivateNetwork: true/);
      expect(baseUrlProblem(url, true)).toBeNull();
    });

    test('public hosts pass; the refusal never repeats credentials', () => {
      expect(baseUrlProblem('https://api.openai.com/v1', false)).toBeNull();
      expect(baseUrlProblem('https://llm.internal.example.com/v1', false)).toBeNull();
      expect(baseUrlProblem('https://user:hunter2-secret@api.example.com', false)).not.toContain('hunter2');
    });
  });
});
