import type { ResolvedDeployment } from '../../../projections/routing-snapshot/index.js';
import type { OpenAiDialect } from '../openai/openai-adapter.js';
import { AZURE_OPENAI_PARAMETERS } from '../openai/openai-parameters.js';
import { OPENAI_COMPATIBLE_DOCUMENTS } from '../parameters/document-support.js';

/**
 * Azure OpenAI speaks the Chat Completions wire format with three differences: the URL names the Azure
 * deployment (the deployment's `model` is the Azure deployment name) and the API version, the key goes in
 * an `api-key` header, and the body names no model. Content-filter refusals (error code `content_filter`,
 * finish_reason `content_filter`) are recognised by the shared OpenAI error and stop-reason mapping.
 */
export const azureOpenAiDialect: OpenAiDialect = {
  path(deployment: ResolvedDeployment): string {
    const apiVersion = deployment.provider.apiVersion;
    // The provider decider refuses an azure-openai provider without an apiVersion; this guards a bypass.
    if (!apiVersion) throw new Error(`azure-openai provider ${deployment.provider.id} has no apiVersion`);
    return `/openai/deployments/${encodeURIComponent(deployment.model)}/chat/completions?api-version=${encodeURIComponent(apiVersion)}`;
  },
  headers(deployment: ResolvedDeployment): Record<string, string> {
    const credential = deployment.provider.credential;
    return credential ? { 'api-key': credential.reveal() } : {};
  },
  maxTokensField: 'max_completion_tokens',
  modelInBody: false,
  requestIdHeaders: ['apim-request-id', 'x-ms-request-id', 'x-request-id'],
  parameters: AZURE_OPENAI_PARAMETERS,
  documents: OPENAI_COMPATIBLE_DOCUMENTS,
};
