import { isIPv4, isIPv6 } from 'node:net';
import { type Detector, type EmitFinding, eachMatch } from './detector.js';
import type { ScanText } from './scan-text.js';

/** Words that make a dotted quad a version number rather than an address (`version 1.2.3.4`, `v1.2.3.4`). */
const VERSION_BEFORE = /(?:\bversions?|\bver\.?|\brelease|\bbuild|\bv)\s*$/i;

/**
 * IPv4 and IPv6 addresses: candidates by pattern (dotted quads inside the numeric windows, hex-and-colon runs inside the colon windows), confirmed by node:net's isIPv4/isIPv6. A dotted quad inside a longer dotted run
 * (`1.2.3.4.5`) or after a version word is not an address.
 */
export class IpAddressDetector implements Detector {
  readonly type = 'ip_address' as const;
  readonly version = 'ip_address/1';
  private readonly ipv4 = /(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?![\w]|\.\d)/g;
  private readonly ipv6 = /(?<![\w:.])(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f.]*(?:%[\w.-]+)?(?![\w:])/g;

  detect(scanText: ScanText, emit: EmitFinding): void {
    const text = scanText.text;
    eachMatch(this.ipv4, text, (match, offset) => {
      const at = offset + match.index;
      if (!isIPv4(match[0])) return;
      if (VERSION_BEFORE.test(text.slice(Math.max(0, at - 12), at))) return;
      emit(at, at + match[0].length);
    }, scanText.numericWindows()); // an address is digits: the pattern starts with a lookbehind, which the engine cannot skip ahead by
    eachMatch(this.ipv6, text, (match, offset) => {
      const candidate = match[0].replace(/\.+$/, ''); // a sentence's full stop
      const address = candidate.replace(/%[\w.-]+$/, '');
      // `a::b` (C++ scopes) is a valid address by the grammar but not by use: a finding has a decimal digit or 3 groups.
      if (!isIPv6(address)) return;
      if (!/\d/.test(address) && address.split(':').filter((group) => group.length > 0).length < 3) return;
      emit(offset + match.index, offset + match.index + candidate.length);
    }, scanText.colonWindows());
  }
}
