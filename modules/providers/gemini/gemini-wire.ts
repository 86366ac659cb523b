/**
 * The Gemini API `generateContent` wire format (v1beta), the subset Switchyard speaks. Field names are
 * the REST (camelCase JSON) names.
 */

export type GeminiPart =
  | { text: string; thought?: boolean; thoughtSignature?: string }
  | { inlineData: { mimeType: string; data: string } }
  | { fileData: { mimeType: string; fileUri: string } }
  | { functionCall: GeminiFunctionCall; thoughtSignature?: string }
  | { functionResponse: { name: string; id?: string; response: Record<string, unknown> } };

export interface GeminiFunctionCall {
  name: string;
  args?: Record<string, unknown>;
  /** Newer models may number their calls; most answers carry no id. */
  id?: string;
}

export interface GeminiContent {
  role: 'user' | 'model';
  parts: GeminiPart[];
}

export interface GeminiFunctionDeclaration {
  name: string;
  description?: string;
  parameters?: Record<string, unknown>;
}

export interface GeminiGenerationConfig {
  temperature?: number;
  topP?: number;
  maxOutputTokens?: number;
  stopSequences?: string[];
  candidateCount?: number;
  seed?: number;
  responseMimeType?: 'text/plain' | 'application/json';
  responseSchema?: Record<string, unknown>;
  topK?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
  responseLogprobs?: boolean;
  /** Alternatives per token (1..20) when responseLogprobs is set. */
  logprobs?: number;
  thinkingConfig?: { thinkingBudget?: number; includeThoughts?: boolean };
}

export interface GeminiLogprobCandidate {
  token?: string;
  tokenId?: number;
  logProbability?: number;
}

export interface GeminiLogprobsResult {
  chosenCandidates?: GeminiLogprobCandidate[];
  topCandidates?: Array<{ candidates?: GeminiLogprobCandidate[] }>;
}

export interface GeminiRequest {
  systemInstruction?: { parts: Array<{ text: string }> };
  contents: GeminiContent[];
  tools?: Array<{ functionDeclarations: GeminiFunctionDeclaration[] }>;
  toolConfig?: { functionCallingConfig: { mode: 'AUTO' | 'ANY' | 'NONE'; allowedFunctionNames?: string[] } };
  generationConfig?: GeminiGenerationConfig;
}

export interface GeminiUsageMetadata {
  /** The whole prompt, cached content included. */
  promptTokenCount?: number;
  cachedContentTokenCount?: number;
  /** Visible output only; thinking is counted separately. */
  candidatesTokenCount?: number;
  thoughtsTokenCount?: number;
  /** Prompt tokens of tool use (e.g. search results fed back to the model); billed as input. */
  toolUsePromptTokenCount?: number;
  totalTokenCount?: number;
}

export interface GeminiCandidate {
  content?: { role?: string; parts?: GeminiPart[] };
  finishReason?: string;
  index?: number;
  logprobsResult?: GeminiLogprobsResult;
}

/** One buffered answer, and also each `data:` payload of a `streamGenerateContent?alt=sse` stream. */
export interface GeminiResponse {
  candidates?: GeminiCandidate[];
  promptFeedback?: { blockReason?: string };
  usageMetadata?: GeminiUsageMetadata;
  modelVersion?: string;
  responseId?: string;
}

/** Google's error envelope (google.rpc.Status as JSON). */
export interface GeminiErrorBody {
  error: {
    code?: number;
    message?: string;
    status?: string;
    details?: Array<{ '@type'?: string; reason?: string; retryDelay?: string }>;
  };
}
