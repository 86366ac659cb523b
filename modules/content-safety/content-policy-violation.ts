import type { ContentDirection } from './finding.js';

/**
 * A `block` finding: the request (input) or its answer (output) may not go on. It names the policies in force and
 * the kind of finding — never the matched value, which must not reach an error message, a log line or an event.
 */
export class ContentPolicyViolation extends Error {
  override readonly name = 'ContentPolicyViolation';

  constructor(
    readonly direction: ContentDirection,
    readonly findingType: string,
    readonly policies: ReadonlyArray<{ policyId: string; version: number }>,
    /** What a stream may still release before its error (the clean text before the block); '' when buffered. */
    readonly released: string = '',
  ) {
    super(`content policy ${policies.map((p) => `${p.policyId}@${p.version}`).join(', ')} blocked the ${direction === 'input' ? 'request' : 'answer'}: ${findingType}`);
  }
}

/** A buffered answer under `reject-buffered` held placeholders that could not be recovered exactly. */
export class UnresolvedPlaceholders extends Error {
  override readonly name = 'UnresolvedPlaceholders';

  constructor(readonly count: number) {
    super(`${count} placeholder(s) in the answer could not be recovered`);
  }
}
