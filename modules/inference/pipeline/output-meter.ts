import type { TokenUsage, UsageEvidence } from '../../../events/index.js';
import {
  type ImplausibleUsage, type ReportedPrompt, type ReportedUsage, type StreamEvent, checkReportedPrompt, checkReportedUsage, reportedField,
} from '../../canonical/index.js';
import type { UsageTerms } from './usage-bound.js';

/** An attempt's usage as billed: the counts, on whose word, and why the provider's word was not taken. */
export interface MeteredUsage {
  usage: TokenUsage;
  evidence: UsageEvidence;
  implausible: ImplausibleUsage | null;
}

/**
 * Keeps what is needed to bill an answer: the provider's usage when it reports one, otherwise a count
 * of what was relayed (for a disconnect or a provider that omits usage). Whatever the provider said
 * passes checkReportedUsage here, the one boundary of the chat path: an implausible count is billed at
 * the gateway's own count and reported (evidence `implausible`).
 */
export class OutputMeter {
  private characters = 0;
  private reported: ReportedUsage | null = null;
  /** The provider's prompt count from the start of the stream: better than the estimate if the stream is cut. */
  private prompt: ReportedPrompt | null = null;
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

  /** A buffered answer's usage as the provider reported it (null: it reported none). */
  reportedUsage(usage: ReportedUsage | null): void {
    this.reported = usage;
  }

  usage(terms: UsageTerms): MeteredUsage {
    const { bound } = terms;
    const output = Math.min(Math.ceil(this.characters / 4), bound.output);
    const prompt = this.prompt ? checkReportedPrompt(this.prompt, bound) : null;
    const counted = { input: prompt?.input ?? terms.estimatedInputTokens, output };
    if (this.reported) {
      const checked = checkReportedUsage(this.reported, bound, counted);
      return { usage: checked.usage, evidence: checked.implausible ? 'implausible' : 'provider', implausible: checked.implausible };
    }
    if (this.prompt) {
      // The prompt's counts as the provider gave them (checked), the output as the gateway counted it.
      const checked = checkReportedUsage(
        { input: this.prompt.input, cachedInput: this.prompt.cachedInput, cacheWrite: this.prompt.cacheWrite, output: [reportedField('counted output', output, true)], reasoning: [] },
        bound,
        counted,
      );
      return { usage: checked.usage, evidence: checked.implausible ? 'implausible' : 'counted', implausible: checked.implausible };
    }
    return { usage: { input: terms.estimatedInputTokens, cachedInput: 0, cacheWrite: 0, output, reasoning: 0 }, evidence: 'counted', implausible: null };
  }
}
