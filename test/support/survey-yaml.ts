import { FIDELITY_CREDENTIALS_ENV } from './fidelity-yaml.js';
import { acmeKeyYaml, mockProviderYaml } from './anthropic-yaml.js';

/** Bedrock's AWS credentials for the survey suites (the fidelity suites' variable): set before the gateway starts. */
export const SURVEY_CREDENTIALS_ENV = FIDELITY_CREDENTIALS_ENV;

/**
 * The client-survey suites' gateway (issue 35): one mock server behind every provider format, each deployment
 * declaring what a current model of its family offers, as an operator would for the clients under test:
 * `gpt` (OpenAI wire), `claude` (Anthropic, with strict tools and structured outputs), `gemini`, `bedrock`
 * (Claude on Bedrock Converse).
 */
export function surveyYaml(mockUrl: string, keyEnv: string): string {
  return `
providers:
${mockProviderYaml('p-openai', 'mock', `${mockUrl}/v1`)}${mockProviderYaml('p-anthropic', 'anthropic', mockUrl)}${mockProviderYaml('p-gemini', 'gemini', mockUrl)}  - { id: p-bedrock, type: bedrock, region: us-east-1, baseUrl: ${mockUrl}, allowPrivateNetwork: true, apiKey: env:${SURVEY_CREDENTIALS_ENV} }
deployments:
  - id: d-gpt
    provider: p-openai
    model: gpt-upstream
    capabilities: [chat, streaming, tools, json_object, json_schema, reasoning]
    contextWindow: 128000
    maxOutputTokens: 16384
    price: { inputPer1M: "2.50", outputPer1M: "10.00" }
  - id: d-claude
    provider: p-anthropic
    model: claude-upstream
    capabilities: [chat, streaming, tools, json_schema, strict_tools, structured_outputs, reasoning]
    contextWindow: 200000
    maxOutputTokens: 32000
    price: { inputPer1M: "3.00", outputPer1M: "15.00" }
  - id: d-gemini
    provider: p-gemini
    model: gemini-upstream
    capabilities: [chat, streaming, tools, json_object, json_schema, reasoning]
    contextWindow: 1000000
    maxOutputTokens: 65536
    price: { inputPer1M: "0.30", outputPer1M: "2.50" }
  - id: d-bedrock
    provider: p-bedrock
    model: anthropic.claude-3-7-sonnet-20250219-v1:0
    capabilities: [chat, streaming, tools, reasoning]
    contextWindow: 200000
    maxOutputTokens: 32000
    price: { inputPer1M: "3.00", outputPer1M: "15.00" }
aliases:
  - { name: gpt, routes: [{ deployment: d-gpt, priority: 0 }] }
  - { name: claude, routes: [{ deployment: d-claude, priority: 0 }] }
  - { name: gemini, routes: [{ deployment: d-gemini, priority: 0 }] }
  - { name: bedrock, routes: [{ deployment: d-bedrock, priority: 0 }] }
  # The same routes under names with "-4" in them: LlamaIndex's Anthropic class decides from the model name whether
  # it may use tools (it must contain -3 or -4), so its agents need an alias named like a Claude model.
  - { name: gpt-4, routes: [{ deployment: d-gpt, priority: 0 }] }
  - { name: claude-4, routes: [{ deployment: d-claude, priority: 0 }] }
  - { name: gemini-4, routes: [{ deployment: d-gemini, priority: 0 }] }
  - { name: bedrock-4, routes: [{ deployment: d-bedrock, priority: 0 }] }
${acmeKeyYaml(keyEnv)}`;
}
