import type { TokenUsage, UsageEvidence } from '../../../events/index.js';
import type { ChatRequest, ChatResponse, ProviderError } from '../../canonical/index.js';
import type { ProviderAdapter } from '../../providers/index.js';
import { attemptFailure } from './attempt-failure.js';
import { GatewayFault } from './gateway-fault.js';
import { OutputMeter } from './output-meter.js';
import type { CallTransport } from './upstream-call.js';

export type BufferedChatResult =
  | { kind: 'answered'; response: ChatResponse; usage: TokenUsage; evidence: UsageEvidence; providerRequestId: string | null }
  | { kind: 'failed'; error: ProviderError };

/**
 * One buffered chat call; a GatewayFault (the gateway's own failure) is thrown, not returned, because it
 * ends the request. The provider's usage is billed when it reports one; otherwise the output is
 * counted from the answer and the input taken from the admission estimate (evidence `counted`).
 * A buffered attempt has no deadline of its own (the request deadline covers it), so the call takes
 * the request's signal itself: only a client disconnect or the request deadline aborts it, as they
 * would a linked per-attempt controller, without one being made and linked for every attempt.
 */
export async function bufferedChatAttempt(
  adapter: ProviderAdapter,
  request: ChatRequest,
  estimatedInputTokens: number,
  requestSignal: AbortSignal,
  transport: (signal: AbortSignal) => Promise<CallTransport>,
): Promise<BufferedChatResult> {
  try {
    const response = await adapter.chat({ ...(await transport(requestSignal)), request });
    const providerRequestId = response.providerRequestId;
    if (response.usage) return { kind: 'answered', response, usage: response.usage, evidence: 'provider', providerRequestId };
    const meter = new OutputMeter();
    for (const choice of response.choices) {
      meter.observe({ type: 'text', choice: choice.index, text: choice.text });
      for (const call of choice.toolCalls) meter.observe({ type: 'tool_call', choice: choice.index, index: 0, id: call.id, name: call.name, arguments: call.arguments });
    }
    return { kind: 'answered', response, ...meter.usage(estimatedInputTokens), providerRequestId };
  } catch (error) {
    const failure = attemptFailure(error, requestSignal);
    if (failure instanceof GatewayFault) throw failure;
    return { kind: 'failed', error: failure };
  }
}
