import type { TokenUsage, UsageEvidence } from '../../../events/index.js';
import type { StreamEvent } from '../../canonical/index.js';

/**
 * Keeps what is needed to bill a stream: the provider's usage when it reports one, otherwise a count
 * of what was relayed (for a disconnect or a provider that omits usage).
 */
export class OutputMeter {
  private characters = 0;
  private reported: TokenUsage | null = null;
  /** The provider's prompt count from the start of the stream: better than the estimate if the stream is cut. */
  private prompt: Pick<TokenUsage, 'input' | 'cachedInput' | 'cacheWrite'> | null = null;
  /** Whether any semantic output (text or tool call) was seen. */
  sawOutput = false;
  /** Whether the provider said why it stopped (a stream without it was cut short). */
  sawFinish = false;

  observe(event: StreamEvent): void {
    switch (event.type) {
      case 'text':
        this.characters += event.text.length;
        this.sawOutput = true;
        break;
      case 'reasoning':
        // Thinking that reached the client is output (it is billed as output tokens) and ends retries.
        this.characters += event.text.length;
        this.sawOutput = true;
        break;
      case 'prompt_usage':
        this.prompt = event.usage;
        break;
      case 'tool_call':
        this.characters += event.arguments.length + (event.name?.length ?? 0);
        this.sawOutput = true;
        break;
      case 'usage':
        this.reported = event.usage;
        break;
      case 'finish':
        this.sawFinish = true;
        break;
      default:
        break;
    }
  }

  usage(estimatedInputTokens: number): { usage: TokenUsage; evidence: UsageEvidence } {
    if (this.reported) return { usage: this.reported, evidence: 'provider' };
    const output = Math.ceil(this.characters / 4);
    return {
      usage: { input: estimatedInputTokens, cachedInput: 0, cacheWrite: 0, ...this.prompt, output, reasoning: 0 },
      evidence: 'counted',
    };
  }
}
