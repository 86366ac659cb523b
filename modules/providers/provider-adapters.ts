import type { ProviderType } from '../../events/index.js';
import type { ResolvedDeployment } from '../../projections/routing-snapshot/index.js';
import { AnthropicAdapter } from './anthropic/anthropic-adapter.js';
import { BedrockAdapter } from './bedrock/bedrock-adapter.js';
import { azureOpenAiDialect } from './azure-openai/azure-openai-dialect.js';
import { GeminiAdapter } from './gemini/gemini-adapter.js';
import { OpenAiAdapter } from './openai/openai-adapter.js';
import { OPENAI_COMPATIBLE_PARAMETERS, OPENAI_PARAMETERS } from './openai/openai-parameters.js';
import { OPENAI_COMPATIBLE_DOCUMENTS, OPENAI_DOCUMENTS } from './parameters/document-support.js';
import type { ProviderAdapter } from './provider-adapter.js';

const bearer = (deployment: ResolvedDeployment): Record<string, string> => {
  const credential = deployment.provider.credential;
  return credential ? { authorization: `Bearer ${credential.reveal()}` } : {};
};

/** The adapter for each provider type (one wire format each). */
export class ProviderAdapters {
  private readonly adapters = new Map<ProviderType, ProviderAdapter>();

  constructor() {
    const chatPath = () => '/chat/completions';
    this.adapters.set('openai', new OpenAiAdapter({ path: chatPath, headers: bearer, maxTokensField: 'max_completion_tokens', modelInBody: true, parameters: OPENAI_PARAMETERS, documents: OPENAI_DOCUMENTS }));
    this.adapters.set('openai-compatible', new OpenAiAdapter({
      path: chatPath, headers: bearer, maxTokensField: 'max_tokens', modelInBody: true, parameters: OPENAI_COMPATIBLE_PARAMETERS, documents: OPENAI_COMPATIBLE_DOCUMENTS,
    }));
    // The mock answers like OpenAI itself, so it gets OpenAI's table (tests route around what OpenAI refuses).
    this.adapters.set('mock', new OpenAiAdapter({ path: chatPath, headers: bearer, maxTokensField: 'max_tokens', modelInBody: true, parameters: OPENAI_PARAMETERS, documents: OPENAI_DOCUMENTS }));
    this.adapters.set('azure-openai', new OpenAiAdapter(azureOpenAiDialect));
    this.adapters.set('gemini', new GeminiAdapter());
    this.adapters.set('anthropic', new AnthropicAdapter());
    this.adapters.set('bedrock', new BedrockAdapter());
  }

  register(type: ProviderType, adapter: ProviderAdapter): void {
    this.adapters.set(type, adapter);
  }

  for(type: ProviderType): ProviderAdapter | undefined {
    return this.adapters.get(type);
  }
}
