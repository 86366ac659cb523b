/** The Bedrock provider's AWS credentials (`ACCESS_KEY_ID:SECRET`); set before the gateway starts. */
export const FIDELITY_CREDENTIALS_ENV = 'SY_TEST_PARAMS_BEDROCK_CREDENTIALS';

/**
 * One mock server behind every provider format: `gpt` (OpenAI wire, OpenAI's parameter table), `claude`
 * (Anthropic), `gemini`, `bedrock` (Claude on Bedrock), and `mixed` (the OpenAI route first, then Anthropic).
 */
export function fidelityYaml(mockUrl: string, keyEnv: string): string {
  return `
providers:
  - { id: p-openai, type: mock, baseUrl: ${mockUrl}/v1, allowPrivateNetwork: true, apiKey: env:SY_TEST_UPSTREAM_KEY }
  - { id: p-anthropic, type: anthropic, baseUrl: ${mockUrl}, allowPrivateNetwork: true, apiKey: env:SY_TEST_UPSTREAM_KEY }
  - { id: p-gemini, type: gemini, baseUrl: ${mockUrl}, allowPrivateNetwork: true, apiKey: env:SY_TEST_UPSTREAM_KEY }
  - { id: p-bedrock, type: bedrock, region: us-east-1, baseUrl: ${mockUrl}, allowPrivateNetwork: true, apiKey: env:${FIDELITY_CREDENTIALS_ENV} }
deployments:
  - id: d-gpt
    provider: p-openai
    model: gpt-upstream
    capabilities: [chat, streaming, tools, json_object, json_schema, reasoning]
    contextWindow: 128000
    maxOutputTokens: 16384
    price: { inputPer1M: "2.50", outputPer1M: "10.00", cachedInputPer1M: "1.25" }
  - id: d-claude
    provider: p-anthropic
    model: claude-upstream
    capabilities: [chat, streaming, tools, reasoning]
    contextWindow: 200000
    maxOutputTokens: 32000
    price: { inputPer1M: "3.00", outputPer1M: "15.00", cachedInputPer1M: "0.30", cacheWritePer1M: "3.75" }
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
    price: { inputPer1M: "3.00", outputPer1M: "15.00", cachedInputPer1M: "0.30", cacheWritePer1M: "3.75" }
aliases:
  - { name: gpt, routes: [{ deployment: d-gpt, priority: 0 }] }
  - { name: claude, routes: [{ deployment: d-claude, priority: 0 }] }
  - { name: gemini, routes: [{ deployment: d-gemini, priority: 0 }] }
  - { name: bedrock, routes: [{ deployment: d-bedrock, priority: 0 }] }
  - name: mixed
    routes:
      - { deployment: d-gpt, priority: 0 }
      - { deployment: d-claude, priority: 1 }
tenants:
  - id: acme
apiKeys:
  - id: acme-app
    tenant: acme
    key: env:${keyEnv}
    scopes: [inference, models:read]
`;
}
