/**
 * A configuration file that uses every field of the schema at least once, rendered into
 * docs/reference/configuration.md. test/unit/reference-docs.test.ts parses it, plans it against an empty
 * event store and checks that it still covers every field, so the example cannot go stale either.
 */
export const CONFIGURATION_EXAMPLE = `providers:
  - id: openai-main
    type: openai                      # baseUrl left out: the public API
    apiKey: env:OPENAI_API_KEY
  - id: azure-eu
    type: azure-openai
    baseUrl: https://my-resource.openai.azure.com
    apiKey: env:AZURE_OPENAI_KEY
    apiVersion: "2024-10-21"
  - id: bedrock-us
    type: bedrock
    region: us-east-1
    apiKey: env:AWS_BEDROCK_CREDENTIALS # resolves to ACCESS_KEY_ID:SECRET_ACCESS_KEY
  - id: local-vllm
    type: openai-compatible
    baseUrl: http://127.0.0.1:8000/v1
    allowPrivateNetwork: true
deployments:
  - id: gpt-4o-mini
    provider: openai-main
    model: gpt-4o-mini
    capabilities: [chat, streaming, tools, vision, json_schema]
    contextWindow: 128000
    maxOutputTokens: 16384
    quotaGroup: openai-org            # deployments of one group share its limits
    limits: { rpm: 5000, tpm: 2000000 }
    price: { inputPer1M: "0.15", outputPer1M: "0.60", cachedInputPer1M: "0.075" }
  - id: gpt-4o-mini-eu
    provider: azure-eu
    model: gpt-4o-mini-eu             # the Azure deployment name
    region: eu-west
    capabilities: [chat, streaming, tools]
    limits: { inputTpm: 500000, outputTpm: 100000, maxConcurrency: 50 }
    price: { inputPer1M: "0.165", outputPer1M: "0.66", currency: USD }
  - id: claude-sonnet
    provider: bedrock-us
    model: anthropic.claude-3-5-sonnet-20240620-v1:0
    region: us-east-1
    capabilities: [chat, streaming, tools, reasoning]
    price: { inputPer1M: "3", outputPer1M: "15", cachedInputPer1M: "0.30", cacheWritePer1M: "3.75", reasoningPer1M: "15" }
  - id: llama-local
    provider: local-vllm
    model: meta-llama/Llama-3.1-8B-Instruct
    price: { inputPer1M: "0", outputPer1M: "0", effectiveFrom: "2030-01-01T00:00:00Z" } # scheduled ahead
    disabled: true                    # declared, but no route uses it
  - id: omni-moderation
    provider: openai-main
    model: omni-moderation-latest
    capabilities: [moderation]        # answers a content policy's moderation check
    price: { inputPer1M: "0", outputPer1M: "0" }
aliases:
  - name: chat-fast
    strategy: priority
    routes:
      - { deployment: gpt-4o-mini, priority: 0, weight: 100 }
      - { deployment: claude-sonnet, priority: 1 }
    policy:
      requiredCapabilities: [chat, streaming]
      maxAttempts: 3
      ttftTimeoutMs: 10000
      canary: { deployment: claude-sonnet, percent: 5, salt: "2026-12" }
      limits: { rpm: 10000, tpm: 5000000, inputTpm: 4000000, outputTpm: 1000000, maxConcurrency: 500 }
      budgetDowngrade: chat-eu
  - name: chat-eu
    strategy: least-latency
    routes: [{ deployment: gpt-4o-mini-eu }]
    policy: { regions: [eu-west], cache: false }
    visibility: private               # only keys that name it may call it
    contentPolicy: eu-minimal         # on top of the tenant's and the key's
  - name: moderator                   # the moderation check of pii-strict goes through it
    routes: [{ deployment: omni-moderation }]
contentPolicies:
  - id: pii-strict
    input:
      email: tokenize                 # reversible placeholders, recovered in the answer
      phone: tokenize
      card: block                     # 400 content_policy_violation, no provider call
      iban: mask
      national_id: mask
      ip_address: log
      secret: block
      prompt_injection: log
      custom: [{ name: project-code, pattern: "PRJ-[0-9]{6}", action: mask }]
      deny_terms: { terms: ["project nightingale"], action: block }
    output: { email: mask, secret: mask }
    webhook:                          # your own check after the local detectors (docs/content-safety-remote.md)
      url: https://guard.example.com/check
      secret: env:GUARD_WEBHOOK_KEY  # signs each call (x-switchyard-signature)
      timeoutMs: 1500
      failOpen: false                 # no verdict: 503 guardrail_unavailable
      directions: [input]
      allowPrivateNetwork: false
    tokenScope: request               # session needs SWITCHYARD_PII_KEY
    unresolvedTokenPolicy: leave-masked
    placeholderInstruction: true
    moderation:                       # billed to the tenant as a request of its own
      alias: moderator
      directions: [input]
      failOpen: true
      categories: [violence, self-harm/intent]
      timeoutMs: 5000
  - id: eu-minimal
    input: { secret: mask }
    output:                           # answers: allow | log | mask | block (never tokenize)
      phone: log
      card: mask
      iban: mask
      national_id: mask
      ip_address: allow
      prompt_injection: log
      custom: [{ name: ticket, pattern: "TCK-[0-9]{4}", action: mask }]
      deny_terms: { terms: ["internal only"], action: block }
tenants:
  - id: acme
    name: ACME Corp
    contentPolicy: pii-strict
    limits: { rpm: 600, tpm: 200000 }
    budget:
      monthlyUsd: "500"
      dailyUsd: "40"
      softPct: 80
      enforcement: hard
      webhook: { url: https://hooks.acme.example/switchyard, secret: env:ACME_WEBHOOK_KEY }
  - id: research
    limits: { inputTpm: 100000, outputTpm: 50000, maxConcurrency: 20 }
    budget:
      monthlyUsd: "100"
      enforcement: soft
      webhook: { url: http://10.0.0.5/alerts, secret: env:RESEARCH_WEBHOOK_KEY, allowPrivateNetwork: true }
apiKeys:
  - id: acme-app
    tenant: acme
    key: env:ACME_APP_KEY             # read once, stored as a SHA-256 hash
    aliases: [chat-fast, chat-eu]
    scopes: [inference, "models:read"]
    limits: { rpm: 60, tpm: 60000, inputTpm: 50000, outputTpm: 20000, maxConcurrency: 8 }
    contentPolicy: eu-minimal
  - id: acme-reports
    tenant: acme
    key: file:/run/secrets/acme-reports-key
    scopes: [admin, "usage:read"]
    expiresAt: "2027-01-01T00:00:00Z"
    budget:
      monthlyUsd: "50"
      dailyUsd: "5"
      softPct: 90
      enforcement: hard
      webhook: { url: http://10.0.0.5/alerts, secret: env:REPORTS_WEBHOOK_KEY, allowPrivateNetwork: true }
`;
