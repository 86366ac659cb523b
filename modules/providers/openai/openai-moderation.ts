import { type ModerationRequest, type ModerationResponse, ProviderError } from '../../canonical/index.js';

/** Canonical moderation request → OpenAI `/moderations` body (the model is the deployment's, when the body names one). */
export function toOpenAiModerationRequest(request: ModerationRequest, model: string | null): Record<string, unknown> {
  return model ? { model, input: request.inputs } : { input: request.inputs };
}

/** OpenAI moderation answer → canonical: one result per input, its flagged categories by name (true in `categories`). */
export function fromOpenAiModeration(body: unknown, expected: number): ModerationResponse {
  const results = (body as { results?: unknown } | null)?.results;
  if (!Array.isArray(results) || results.length !== expected) throw new ProviderError('malformed_response', 'the provider did not return one moderation result per input');
  return {
    providerRequestId: null,
    results: results.map((result: unknown) => {
      const { flagged, categories } = (result ?? {}) as { flagged?: unknown; categories?: unknown };
      if (typeof flagged !== 'boolean') throw new ProviderError('malformed_response', 'the provider returned a moderation result without `flagged`');
      const named = categories && typeof categories === 'object' ? Object.entries(categories).filter(([, on]) => on === true).map(([name]) => name) : [];
      return { flagged, categories: named };
    }),
  };
}
