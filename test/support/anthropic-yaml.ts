/**
 * Gateway configuration for the Anthropic suites: one mock server speaking both wire formats, reached
 * by an `anthropic` provider (its Messages dialect) and an `openai-compatible` one (Chat Completions).
 *
 * Aliases: `claude` (Anthropic primary, then Anthropic backup), `claude-solo` (Anthropic only),
 * `gpt` (OpenAI-compatible only).
 */
/** One provider entry for the suite's mock server, which speaks every wire format on loopback. */
export function mockProviderYaml(id: string, type: string, baseUrl: string): string {
  return `  - id: ${id}
    type: ${type}
    baseUrl: ${baseUrl}
    allowPrivateNetwork: true   # the mock listens on loopback
    apiKey: env:SY_TEST_UPSTREAM_KEY
`;
}

/** The suites' tenant `acme` and its key `acme-app`, whose secret the variable `keyEnv` holds. */
export function acmeKeyYaml(keyEnv: string): string {
  return `tenants:
  - id: acme
apiKeys:
  - id: acme-app
    tenant: acme
    key: env:${keyEnv}
    scopes: [inference, models:read]
`;
}

export function anthropicYaml(mockUrl: string, keyEnv: string): string {
  return `
providers:
${mockProviderYaml('mock-anthropic', 'anthropic', mockUrl)}${mockProviderYaml('mock-openai', 'openai-compatible', `${mockUrl}/v1`)}deployments:
  - id: claude-primary
    provider: mock-anthropic
    model: claude-upstream
    capabilities: [chat, streaming, tools, vision]
    contextWindow: 200000
    maxOutputTokens: 8192
    price: { inputPer1M: "3.00", outputPer1M: "15.00", cachedInputPer1M: "0.30", cacheWritePer1M: "3.75" }
  - id: claude-backup
    provider: mock-anthropic
    model: claude-backup-upstream
    capabilities: [chat, streaming, tools, vision]
    contextWindow: 200000
    maxOutputTokens: 2048
    price: { inputPer1M: "0.80", outputPer1M: "4.00" }
  - id: gpt-primary
    provider: mock-openai
    model: gpt-upstream
    capabilities: [chat, streaming, tools, vision, json_object, json_schema]
    contextWindow: 128000
    maxOutputTokens: 16384
    price: { inputPer1M: "2.50", outputPer1M: "10.00", cachedInputPer1M: "1.25" }
aliases:
  - name: claude
    routes:
      - { deployment: claude-primary, priority: 0 }
      - { deployment: claude-backup, priority: 1 }
  - name: claude-solo
    routes:
      - { deployment: claude-primary, priority: 0 }
  - name: gpt
    routes:
      - { deployment: gpt-primary, priority: 0 }
${acmeKeyYaml(keyEnv)}`;
}
