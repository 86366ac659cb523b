import type { ProviderType } from '../../events/provider-events.js';
import type { ResolvedDeployment } from '../../projections/routing-snapshot/routing-snapshot.js';
import { OpenAiAdapter } from './openai/openai-adapter.js';
import type { ProviderAdapter } from './provider-adapter.js';

const bearer = (deployment: ResolvedDeployment): Record<string, string> => {
  const credential = deployment.provider.credential;
  return credential ? { authorization: `Bearer ${credential.reveal()}` } : {};
};

/** The adapter for each provider type (one wire format each). */
export class ProviderAdapters {
  private readonly adapters = new Map<ProviderType, ProviderAdapter>();

  constructor() {
    this.adapters.set('openai', new OpenAiAdapter({ path: () => '/chat/completions', headers: bearer, maxTokensField: 'max_completion_tokens', modelInBody: true }));
    const compatible = new OpenAiAdapter({ path: () => '/chat/completions', headers: bearer, maxTokensField: 'max_tokens', modelInBody: true });
    this.adapters.set('openai-compatible', compatible);
    this.adapters.set('mock', compatible);
  }

  register(type: ProviderType, adapter: ProviderAdapter): void {
    this.adapters.set(type, adapter);
  }

  for(type: ProviderType): ProviderAdapter | undefined {
    return this.adapters.get(type);
  }
}
