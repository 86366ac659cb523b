/** The OpenAI Chat Completions wire format (the subset Switchyard speaks), shared by client and provider sides. */

export type OpenAiContentPart =
  | { type: 'text'; text: string }
  | { type: 'image_url'; image_url: { url: string; detail?: 'auto' | 'low' | 'high' } }
  | { type: 'file'; file: { file_data?: string; file_id?: string; filename?: string } };

export interface OpenAiToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export type OpenAiMessage =
  | { role: 'system' | 'developer'; content: string | OpenAiContentPart[]; name?: string }
  | { role: 'user'; content: string | OpenAiContentPart[]; name?: string }
  | {
      role: 'assistant';
      content: string | OpenAiContentPart[] | null;
      tool_calls?: OpenAiToolCall[];
      name?: string;
      refusal?: string | null;
      /** Earlier reasoning sent back (DeepSeek-style servers accept and ignore it; OpenAI ignores it). */
      reasoning_content?: string | null;
    }
  | { role: 'tool'; content: string | OpenAiContentPart[]; tool_call_id: string };

export interface OpenAiUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: { cached_tokens?: number; cache_write_tokens?: number } | null;
  completion_tokens_details?: { reasoning_tokens?: number } | null;
}

/** One token's log probability as OpenAI writes it (`choices[].logprobs.content[]`). */
export interface OpenAiTokenLogprob {
  token: string;
  logprob: number;
  bytes: number[] | null;
  top_logprobs: Array<{ token: string; logprob: number; bytes: number[] | null }>;
}

export interface OpenAiLogprobs {
  content: OpenAiTokenLogprob[] | null;
  refusal?: OpenAiTokenLogprob[] | null;
}

export interface OpenAiChatCompletion {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: Array<{
    index: number;
    message: {
      role: 'assistant';
      content: string | null;
      tool_calls?: OpenAiToolCall[];
      refusal?: string | null;
      /** Reasoning text of OpenAI-compatible reasoning servers (DeepSeek, vLLM, Ollama); `reasoning` on some. */
      reasoning_content?: string | null;
      reasoning?: string | null;
      thinking_blocks?: unknown[];
    };
    finish_reason: string | null;
    logprobs?: OpenAiLogprobs | null;
  }>;
  usage?: OpenAiUsage;
  system_fingerprint?: string | null;
}

export interface OpenAiChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  choices: Array<{
    index: number;
    delta: {
      role?: 'assistant';
      content?: string | null;
      tool_calls?: Array<{ index: number; id?: string; type?: 'function'; function?: { name?: string; arguments?: string } }>;
      refusal?: string | null;
      reasoning_content?: string | null;
      reasoning?: string | null;
    };
    finish_reason: string | null;
    logprobs?: OpenAiLogprobs | null;
  }>;
  usage?: OpenAiUsage | null;
  system_fingerprint?: string | null;
}

export interface OpenAiErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}
