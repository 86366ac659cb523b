import { GatewayError } from './gateway-error.js';

/** The numbers of a request that does not fit a context window, in tokens. */
export interface ContextLengthNumbers {
  /** The prompt: the gateway's estimate before routing, or the provider's own count when it said one. */
  inputTokens: number;
  /** The output the window had to hold beside the prompt (asked for or defaulted); null when the provider did not say. */
  outputTokens: number | null;
  /** The largest window on offer (before routing), or the provider's limit. */
  contextWindow: number;
  /** The alias-level route whose window that is (`alias#n`); null when the provider's words are all there is. */
  route: string | null;
  /** Whether `inputTokens` is the gateway's estimate (it counts before any provider does). */
  estimated: boolean;
}

/**
 * 400 context_length_exceeded with its numbers, so each client format can say it in the words its
 * clients recognise (OpenAI's "maximum context length is …", Anthropic's "prompt is too long: N tokens
 * > M maximum", the Responses API's "Your input exceeds the context window …"); the numbers also go
 * out as machine-readable detail. `message` is the format-neutral wording (logs, the journal).
 */
export class ContextLengthExceeded extends GatewayError {
  constructor(
    readonly numbers: ContextLengthNumbers,
    status = 400,
    param: string | null = 'messages',
    private readonly providerRequestId: string | null = null,
    headers: Record<string, string> = {},
  ) {
    super(
      status, 'context_length_exceeded', `${neutralMessage(numbers)}${providerRequestId ? ` (provider request id: ${providerRequestId})` : ''}`, param, headers,
      Object.assign(
        { input_tokens: numbers.inputTokens, output_tokens: numbers.outputTokens, context_window: numbers.contextWindow, route: numbers.route },
        providerRequestId ? { provider_request_id: providerRequestId } : {},
      ),
    );
  }

  override withHeaders(extra: Record<string, string>): ContextLengthExceeded {
    return new ContextLengthExceeded(this.numbers, this.status, this.param, this.providerRequestId, Object.assign({}, this.headers, extra));
  }

  /** Prompt and output together, or the prompt alone when the output is not known. */
  get requestedTokens(): number {
    return this.numbers.inputTokens + (this.numbers.outputTokens ?? 0);
  }

  /** Where the window is, and how the input was counted: the gateway's addition to each client's wording. */
  get provenance(): string {
    const parts = this.provenanceParts;
    return parts.length ? ` (${parts.join('; ')})` : '';
  }

  get provenanceParts(): string[] {
    const { route, estimated } = this.numbers;
    return [
      route ? `the largest context window on offer is route ${route}'s` : null,
      estimated ? 'the input count is the gateway\'s estimate' : null,
      this.providerRequestId ? `provider request id: ${this.providerRequestId}` : null,
    ].filter((p) => p !== null);
  }
}

function neutralMessage({ inputTokens, outputTokens, contextWindow, route, estimated }: ContextLengthNumbers): string {
  const input = `${inputTokens} input tokens${estimated ? ' (estimated)' : ''}`;
  const asked = outputTokens === null ? input : `${input} and ${outputTokens} output tokens`;
  const window = route ? `the largest context window on offer, ${contextWindow} tokens on route ${route}` : `the context window of ${contextWindow} tokens`;
  return `The request does not fit: ${asked} exceed ${window}.`;
}
