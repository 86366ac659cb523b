import type OpenAI from 'openai';
import { DEFAULT_BEHAVIOUR } from '../../modules/providers/mock/mock-behaviour.js';
import { mockEmbeddingTokens } from '../../modules/providers/mock/mock-embeddings.js';
import { type MockAnswer, type MockInput, planAnswer, sampleFor } from '../../modules/providers/mock/mock-script.js';

/** The two official client SDKs the matrix drives. */
export type ClientSdk = 'openai' | 'anthropic';
export const CLIENT_SDKS: readonly ClientSdk[] = ['openai', 'anthropic'];

export const BEDROCK_CREDENTIALS_ENV = 'SY_TEST_BEDROCK_CREDENTIALS';
export const BEDROCK_CREDENTIALS = 'AKIDEXAMPLE:wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY';
export const AZURE_API_VERSION = '2024-10-21';
export const ANTHROPIC_API_VERSION = '2023-06-01';

/** An embeddings route of a provider format, and what the mock calls its dialect. */
export interface EmbeddingsRoute {
  alias: string;
  deployment: string;
  model: string;
  /** Name of the mock's embeddings dialect (`MockRequestRecord.format`). */
  mockFormat: 'openai-embeddings' | 'bedrock-titan-embeddings';
  /** Vector length the mock answers with when the request names none. */
  dimensions: number;
  /** Upstream calls per request of n inputs (Titan embeds one text per call). */
  callsFor(inputs: number): number;
}

/** One provider format of the matrix: the alias backed by it, and what the mock will see and answer. */
export interface ProviderFormat {
  type: 'openai-compatible' | 'azure-openai' | 'anthropic' | 'gemini' | 'bedrock';
  /** The chat alias (one route, on a deployment that declares tools and vision). */
  alias: string;
  deployment: string;
  /** The upstream model id (Azure: the deployment name; Bedrock: the model id). */
  model: string;
  /** Name of the mock's wire dialect this provider type speaks (`MockRequestRecord.format`). */
  mockFormat: 'openai' | 'anthropic' | 'gemini' | 'bedrock';
  capabilities: string[];
  /** Whether the provider can honour `response_format: json_schema` (else: a 400 naming it). */
  jsonSchema: boolean;
  /** The tool-call id the client sees for the mock's answer to upstream call `seq`. */
  toolCallId(seq: number): string;
  /** Whether tool ids travel on the provider's wire (Gemini matches calls and results by name instead). */
  wireToolIds: boolean;
  /** Whether the provider streams tool arguments in pieces (Gemini sends each call whole). */
  toolArgumentsInPieces: boolean;
  embeddings: EmbeddingsRoute | null;
}

const CHAT = ['chat', 'streaming', 'tools', 'vision'];

export const PROVIDER_FORMATS: readonly ProviderFormat[] = [
  {
    type: 'openai-compatible',
    alias: 'openai-compatible',
    deployment: 'openai-compatible-chat',
    model: 'gpt-conformance',
    mockFormat: 'openai',
    capabilities: [...CHAT, 'json_object', 'json_schema'],
    jsonSchema: true,
    toolCallId: (seq) => `call_mock_${seq}`,
    wireToolIds: true,
    toolArgumentsInPieces: true,
    embeddings: {
      alias: 'openai-compatible-embeddings',
      deployment: 'openai-compatible-embed',
      model: 'text-embedding-3-small',
      mockFormat: 'openai-embeddings',
      dimensions: 1536,
      callsFor: () => 1,
    },
  },
  {
    type: 'azure-openai',
    alias: 'azure-openai',
    deployment: 'azure-openai-chat',
    model: 'gpt4o-conformance-eastus',
    mockFormat: 'openai',
    capabilities: [...CHAT, 'json_object', 'json_schema'],
    jsonSchema: true,
    toolCallId: (seq) => `call_mock_${seq}`,
    wireToolIds: true,
    toolArgumentsInPieces: true,
    embeddings: {
      alias: 'azure-openai-embeddings',
      deployment: 'azure-openai-embed',
      model: 'embed-small-eastus',
      mockFormat: 'openai-embeddings',
      dimensions: 1536,
      callsFor: () => 1,
    },
  },
  {
    type: 'anthropic',
    alias: 'anthropic',
    deployment: 'anthropic-chat',
    model: 'claude-conformance',
    mockFormat: 'anthropic',
    capabilities: CHAT,
    jsonSchema: false,
    toolCallId: (seq) => `toolu_mock_${seq}`,
    wireToolIds: true,
    toolArgumentsInPieces: true,
    embeddings: null,
  },
  {
    type: 'gemini',
    alias: 'gemini',
    deployment: 'gemini-chat',
    model: 'gemini-2.5-flash',
    mockFormat: 'gemini',
    capabilities: [...CHAT, 'json_object', 'json_schema'],
    jsonSchema: true,
    // Gemini gives calls no ids: the gateway names them call_<position in the answer>.
    toolCallId: () => 'call_0',
    wireToolIds: false,
    toolArgumentsInPieces: false,
    embeddings: null,
  },
  {
    type: 'bedrock',
    alias: 'bedrock',
    deployment: 'bedrock-chat',
    model: 'anthropic.claude-3-5-sonnet-20240620-v1:0',
    mockFormat: 'bedrock',
    capabilities: CHAT,
    jsonSchema: false,
    toolCallId: (seq) => `tooluse_mock_${seq}`,
    wireToolIds: true,
    toolArgumentsInPieces: true,
    embeddings: {
      alias: 'bedrock-embeddings',
      deployment: 'bedrock-titan-embed',
      model: 'amazon.titan-embed-text-v2:0',
      mockFormat: 'bedrock-titan-embeddings',
      dimensions: 1024,
      callsFor: (inputs) => inputs,
    },
  },
];

/**
 * The 429 case of each (provider, SDK) pair has an alias and deployment of its own: a provider's
 * retry-after holds the deployment back, and that must not leak into any other case of the matrix.
 */
export function throttled(provider: ProviderFormat, sdk: ClientSdk): { alias: string; deployment: string; model: string } {
  const name = `${provider.type}-throttled-${sdk}`;
  return { alias: name, deployment: name, model: `${provider.model}-throttled-${sdk}` };
}

/** Every alias the matrix configures, all public: what `GET /v1/models` must list. */
export function configuredAliases(): string[] {
  return PROVIDER_FORMATS.flatMap((p) => [p.alias, ...(p.embeddings ? [p.embeddings.alias] : []), ...CLIENT_SDKS.map((sdk) => throttled(p, sdk).alias)]);
}

/** One provider per format, all on the test's mock; per format a chat alias, its 429 aliases and (where served) an embeddings alias. */
export function conformanceYaml(mockUrl: string, keyEnv: string): string {
  const deployments: string[] = [];
  const aliases: string[] = [];
  const route = (alias: string, deployment: string) => `  - name: ${alias}\n    routes:\n      - { deployment: ${deployment}, priority: 0 }`;
  for (const provider of PROVIDER_FORMATS) {
    const chat = (id: string, model: string) =>
      [
        `  - id: ${id}`,
        `    provider: up-${provider.type}`,
        `    model: ${model}`,
        `    capabilities: [${provider.capabilities.join(', ')}]`,
        '    contextWindow: 128000',
        '    maxOutputTokens: 8192',
        '    price: { inputPer1M: "3.00", outputPer1M: "15.00" }',
      ].join('\n');
    deployments.push(chat(provider.deployment, provider.model));
    aliases.push(route(provider.alias, provider.deployment));
    for (const sdk of CLIENT_SDKS) {
      const t = throttled(provider, sdk);
      deployments.push(chat(t.deployment, t.model));
      aliases.push(route(t.alias, t.deployment));
    }
    if (provider.embeddings) {
      const e = provider.embeddings;
      deployments.push(
        [
          `  - id: ${e.deployment}`,
          `    provider: up-${provider.type}`,
          `    model: ${e.model}`,
          '    capabilities: [embeddings]',
          '    contextWindow: 8192',
          '    price: { inputPer1M: "0.02", outputPer1M: "0" }',
        ].join('\n'),
      );
      aliases.push(route(e.alias, e.deployment));
    }
  }
  return `
providers:
  - id: up-openai-compatible
    type: openai-compatible
    baseUrl: ${mockUrl}/v1
    allowPrivateNetwork: true   # the mock listens on loopback
    apiKey: env:SY_TEST_UPSTREAM_KEY
  - id: up-azure-openai
    type: azure-openai
    baseUrl: ${mockUrl}
    allowPrivateNetwork: true   # the mock listens on loopback
    apiKey: env:SY_TEST_UPSTREAM_KEY
    apiVersion: "${AZURE_API_VERSION}"
  - id: up-anthropic
    type: anthropic
    baseUrl: ${mockUrl}
    allowPrivateNetwork: true   # the mock listens on loopback
    apiKey: env:SY_TEST_UPSTREAM_KEY
    apiVersion: "${ANTHROPIC_API_VERSION}"
  - id: up-gemini
    type: gemini
    baseUrl: ${mockUrl}
    allowPrivateNetwork: true   # the mock listens on loopback
    apiKey: env:SY_TEST_UPSTREAM_KEY
  - id: up-bedrock
    type: bedrock
    region: us-east-1
    baseUrl: ${mockUrl}
    allowPrivateNetwork: true   # the mock listens on loopback
    apiKey: env:${BEDROCK_CREDENTIALS_ENV}
deployments:
${deployments.join('\n')}
aliases:
${aliases.join('\n')}
tenants:
  - id: acme
apiKeys:
  - id: acme-app
    tenant: acme
    key: env:${keyEnv}
    scopes: [inference, models:read]
`;
}

/** The one tool of the matrix; the mock fills its arguments with `sampleFor(WEATHER_SCHEMA)`. */
export const WEATHER_SCHEMA = { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] };
/** The JSON schema output case; every provider that honours it must accept this schema. */
export const CAPITAL_SCHEMA = {
  type: 'object' as const,
  properties: { city: { type: 'string' }, population: { type: 'integer' } },
  required: ['city', 'population'],
  additionalProperties: false,
};
/** A 1×1 PNG, inline as base64 so every provider can take it (Bedrock refuses http image URLs). */
export const PNG_BASE64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
/** A tool result as JSON text: Gemini's functionResponse needs an object, the others take the text. */
export const TOOL_RESULT = '{"temperature":18,"sky":"clear"}';

/**
 * What the mock plans to answer a one-message text prompt (no tools, no format): the text the
 * client must see and the usage it must report. Every provider dialect of the mock reads the same
 * prompt text out of a single user message, so the plan is the same whatever the route.
 */
export function plannedText(prompt: string, overrides: Partial<MockInput> = {}): { text: string; finish: MockAnswer['finishReason']; usage: MockAnswer['usage'] } {
  const answer = planAnswer(
    { model: 'any', stream: false, includeUsage: false, promptText: prompt, tools: [], toolChoice: 'auto', answeringToolResult: false, responseFormat: null, maxTokens: null, ...overrides },
    DEFAULT_BEHAVIOUR,
    0,
  );
  return { text: answer.textPieces.join(''), finish: answer.finishReason, usage: answer.usage };
}

/** The arguments the mock gives a call of a tool with this schema. */
export const plannedArguments = (schema: Record<string, unknown>): unknown => sampleFor(schema);

/** Token count the mock (and so the provider) reports for these embeddings inputs. */
export const embeddingTokens = (inputs: string[]): number => inputs.reduce((sum, text) => sum + mockEmbeddingTokens(text), 0);

/** An OpenAI chat stream folded into what a caller sees: text, calls by index, finish reason, usage chunks. */
export interface FoldedOpenAiStream {
  text: string;
  calls: Array<{ id: string; name: string; arguments: string; argumentPieces: number }>;
  finish: string | null;
  usageChunks: OpenAI.Chat.Completions.ChatCompletionChunk[];
  chunks: OpenAI.Chat.Completions.ChatCompletionChunk[];
}

export async function foldOpenAiStream(stream: AsyncIterable<OpenAI.Chat.Completions.ChatCompletionChunk>): Promise<FoldedOpenAiStream> {
  const folded: FoldedOpenAiStream = { text: '', calls: [], finish: null, usageChunks: [], chunks: [] };
  for await (const chunk of stream) {
    folded.chunks.push(chunk);
    if (chunk.usage) folded.usageChunks.push(chunk);
    const choice = chunk.choices[0];
    if (!choice) continue;
    folded.text += choice.delta?.content ?? '';
    for (const call of choice.delta?.tool_calls ?? []) {
      const entry = (folded.calls[call.index] ??= { id: '', name: '', arguments: '', argumentPieces: 0 });
      if (call.id) entry.id = call.id;
      if (call.function?.name) entry.name = call.function.name;
      if (call.function?.arguments) {
        entry.arguments += call.function.arguments;
        entry.argumentPieces++;
      }
    }
    folded.finish = choice.finish_reason ?? folded.finish;
  }
  return folded;
}
