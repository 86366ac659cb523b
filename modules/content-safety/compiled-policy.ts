import type { CountryCode } from 'libphonenumber-js';
import type { BuiltInFindingType, ContentAction, ContentPolicyDefinition, DirectionRules } from '../../events/index.js';
import { CardDetector } from './detectors/card-detector.js';
import { CustomPatternDetector } from './detectors/custom-pattern-detector.js';
import { DenyTermsDetector } from './detectors/deny-terms-detector.js';
import type { Detector } from './detectors/detector.js';
import { EmailDetector } from './detectors/email-detector.js';
import { IbanDetector } from './detectors/iban-detector.js';
import { IpAddressDetector } from './detectors/ip-address-detector.js';
import { NationalIdDetector } from './detectors/national-id-detector.js';
import { PhoneDetector } from './detectors/phone-detector.js';
import { PromptInjectionDetector } from './detectors/prompt-injection-detector.js';
import { SecretDetector } from './detectors/secret-detector.js';
import { stricterAction } from './finding.js';

/** A detector and what the policy does with its findings. */
export interface CompiledRule {
  detector: Detector;
  action: ContentAction;
}

/** The rules of one direction, ready to scan with: detectors built once, regexes compiled once. */
export interface CompiledRules {
  readonly rules: readonly CompiledRule[];
}

/** Everything a request needs from the policies in force, compiled. */
export interface CompiledContentPolicy {
  input: CompiledRules;
  output: CompiledRules;
  tokenScope: ContentPolicyDefinition['tokenScope'];
  unresolvedTokenPolicy: ContentPolicyDefinition['unresolvedTokenPolicy'];
  placeholderInstruction: boolean;
  /** Detector → version, for the transformation manifest: what found what. */
  detectorVersions: Record<string, string>;
}

export interface CompileOptions {
  /** The region whose national-format phone numbers are recognised (international `+` numbers always are). */
  phoneRegion?: CountryCode;
}

const BUILT_IN_ORDER: readonly BuiltInFindingType[] = ['email', 'phone', 'card', 'iban', 'national_id', 'ip_address', 'secret', 'prompt_injection'];

/**
 * Compiles the policies in force on a request (tenant, key, alias) into one rule set per direction. When several
 * policies apply they combine to the strictest: per built-in finding type the strictest action; every custom pattern
 * and deny list of every policy (each with its own action); `session` scope, `reject-buffered` and the placeholder
 * instruction if any policy asks for them. `allow` is not scanned at all.
 *
 * Definitions must be valid (contentPolicyProblems) and normalized: compiling is not validating.
 */
export function compilePolicy(definitions: ContentPolicyDefinition | readonly ContentPolicyDefinition[], options: CompileOptions = {}): CompiledContentPolicy {
  const all = Array.isArray(definitions) ? definitions : [definitions as ContentPolicyDefinition];
  const input = compileDirection(all.map((definition) => definition.input), options);
  const output = compileDirection(all.map((definition) => definition.output), options);
  const detectorVersions: Record<string, string> = {};
  for (const { detector } of [...input.rules, ...output.rules]) detectorVersions[detector.type] = detector.version;
  return {
    input,
    output,
    tokenScope: all.some((definition) => definition.tokenScope === 'session') ? 'session' : 'request',
    unresolvedTokenPolicy: all.some((definition) => definition.unresolvedTokenPolicy === 'reject-buffered') ? 'reject-buffered' : 'leave-masked',
    placeholderInstruction: all.some((definition) => definition.placeholderInstruction),
    detectorVersions,
  };
}

function compileDirection(directions: readonly DirectionRules[], options: CompileOptions): CompiledRules {
  const rules: CompiledRule[] = [];
  for (const type of BUILT_IN_ORDER) {
    let action: ContentAction = 'allow';
    for (const direction of directions) action = stricterAction(action, direction[type] ?? 'allow');
    if (action !== 'allow') rules.push({ detector: builtInDetector(type, options), action });
  }
  const custom = new Map<string, { pattern: string; action: ContentAction }[]>();
  for (const direction of directions) {
    for (const rule of direction.custom ?? []) {
      if (rule.action === 'allow') continue;
      const list = custom.get(rule.name) ?? [];
      list.push({ pattern: rule.pattern, action: rule.action });
      custom.set(rule.name, list);
    }
  }
  for (const [name, list] of custom) for (const { pattern, action } of list) rules.push({ detector: new CustomPatternDetector(name, pattern), action });
  // One deny list per action: terms of a `log` list are not escalated by another policy's `block` list.
  const denied = new Map<ContentAction, string[]>();
  for (const direction of directions) {
    const deny = direction.deny_terms;
    if (!deny || deny.action === 'allow' || deny.terms.length === 0) continue;
    denied.set(deny.action, [...(denied.get(deny.action) ?? []), ...deny.terms]);
  }
  for (const [action, terms] of denied) rules.push({ detector: new DenyTermsDetector(terms), action });
  return { rules };
}

function builtInDetector(type: BuiltInFindingType, options: CompileOptions): Detector {
  switch (type) {
    case 'email': return new EmailDetector();
    case 'phone': return new PhoneDetector(options.phoneRegion);
    case 'card': return new CardDetector();
    case 'iban': return new IbanDetector();
    case 'national_id': return new NationalIdDetector();
    case 'ip_address': return new IpAddressDetector();
    case 'secret': return new SecretDetector();
    case 'prompt_injection': return new PromptInjectionDetector();
    default: {
      const unknown: never = type;
      throw new Error(`no detector for ${String(unknown)}`);
    }
  }
}
