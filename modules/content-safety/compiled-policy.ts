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
 * Compiles the policy in force on a request — one definition: when several policies apply (tenant, key, alias), the
 * routing snapshot has combined them already (projections/routing-snapshot/effective-content-policy.ts, the rules in
 * docs/content-safety.md). `allow` is not scanned at all. The definition must be valid (contentPolicyProblems) and
 * normalized: compiling is not validating.
 */
export function compilePolicy(definition: ContentPolicyDefinition, options: CompileOptions = {}): CompiledContentPolicy {
  const input = compileDirection(definition.input, options);
  const output = compileDirection(definition.output, options);
  const detectorVersions: Record<string, string> = {};
  for (const { detector } of [...input.rules, ...output.rules]) detectorVersions[detector.type] = detector.version;
  return {
    input,
    output,
    tokenScope: definition.tokenScope,
    unresolvedTokenPolicy: definition.unresolvedTokenPolicy,
    placeholderInstruction: definition.placeholderInstruction,
    detectorVersions,
  };
}

function compileDirection(direction: DirectionRules, options: CompileOptions): CompiledRules {
  const rules: CompiledRule[] = [];
  for (const type of BUILT_IN_ORDER) {
    const action = direction[type] ?? 'allow';
    if (action !== 'allow') rules.push({ detector: builtInDetector(type, options), action });
  }
  for (const rule of direction.custom ?? []) {
    if (rule.action !== 'allow') rules.push({ detector: new CustomPatternDetector(rule.name, rule.pattern), action: rule.action });
  }
  const deny = direction.deny_terms;
  if (deny && deny.action !== 'allow' && deny.terms.length > 0) rules.push({ detector: new DenyTermsDetector(deny.terms), action: deny.action });
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
