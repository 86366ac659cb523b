import Anthropic from '@anthropic-ai/sdk';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { type ModelMessage, generateText, streamText, tool } from 'ai';
import OpenAI from 'openai';
import { z } from 'zod';
import type { RequestAdmitted, RequestCompleted } from '../../events/request-events.js';
import type { FindingType } from '../../modules/content-safety/finding.js';
import { typeCode } from '../../modules/content-safety/placeholder.js';
import { maskMarker } from '../../modules/content-safety/transformation.js';
import { corpusEntries } from '../fixtures/content-safety/corpus.js';
import { BEDROCK_CREDENTIALS, BEDROCK_CREDENTIALS_ENV } from '../support/conformance.js';
import { type TestGateway, startTestGateway } from '../support/gateway-harness.js';

/**
 * The content-safety matrix (issue 36, Tests): the generated corpus (test/fixtures/content-safety) in every placement
 * (user text, system prompt / Anthropic system block, tool result, an earlier assistant tool call's arguments,
 * Responses function_call / function_call_output items, a text document) × every client format (OpenAI Chat and
 * Responses through `openai`, Anthropic Messages through `@anthropic-ai/sdk`, the Vercel AI SDK through
 * `@ai-sdk/openai` (its Responses model and its Chat model, which sends no text document) and `@ai-sdk/anthropic`)
 * × every action (mask, tokenize, block, log), buffered and streamed, to
 * OpenAI-compatible and Anthropic routes (Gemini and Bedrock for tokenize recovery in their stream formats).
 *
 * One request carries the whole corpus (every finding type, every value in every frame) between a case tag and an
 * end tag; the mock provider echoes the prompt (`echo`), so each entry is checked twice: at the mock (what it
 * received: the marker, a placeholder of the type's grammar, or the value as sent) and at the client (what came
 * back: markers, the exact values recovered, or the values). The echo carries user text, system prompts and tool
 * results; it does not carry earlier tool-call arguments, nor a document on an Anthropic route (a document block
 * is not prompt text to the mock): those cases are checked at the mock only. `block` gets one request per finding
 * type: a 400 in the client's own error format naming the type and never the value, and no provider call.
 * Failures are collected per case and reported together, each naming its case.
 */

type Action = 'mask' | 'tokenize' | 'block' | 'log';
type Client = 'openai-chat' | 'anthropic-messages' | 'openai-responses' | 'ai-sdk-openai' | 'ai-sdk-openai-chat' | 'ai-sdk-anthropic';
type Placement = 'user' | 'system' | 'tool_result' | 'tool_arguments' | 'document';
type Provider = 'openai-compatible' | 'anthropic' | 'gemini' | 'bedrock';

const ACTIONS: readonly Action[] = ['mask', 'tokenize', 'block', 'log'];
const CLIENTS: readonly Client[] = ['openai-chat', 'anthropic-messages', 'openai-responses', 'ai-sdk-openai', 'ai-sdk-openai-chat', 'ai-sdk-anthropic'];
const PLACEMENTS: readonly Placement[] = ['user', 'system', 'tool_result', 'tool_arguments', 'document'];
/** The AI SDK's Chat Completions model sends no text/plain file (it throws UnsupportedFunctionalityError before any request). */
const placementsOf = (client: Client): readonly Placement[] => (client === 'ai-sdk-openai-chat' ? PLACEMENTS.filter((placement) => placement !== 'document') : PLACEMENTS);
const PROVIDERS: readonly Provider[] = ['openai-compatible', 'anthropic', 'gemini', 'bedrock'];
/** Every client here streams. */
const MODES = [false, true] as const;

/** The corpus entries plus a custom pattern and a deny-listed term: every finding type a policy can name. */
interface Entry {
  type: FindingType;
  value: string;
  text: string;
}
const CUSTOM_NAME = 'project-code';
const ENTRIES: readonly Entry[] = [
  ...corpusEntries(),
  { type: `custom:${CUSTOM_NAME}`, value: 'PRJ-123456', text: 'Budget line PRJ-123456 is open.' },
  { type: `custom:${CUSTOM_NAME}`, value: 'PRJ-987654', text: '{"code":"PRJ-987654"}' },
  { type: 'deny_terms', value: 'project nightingale', text: 'Status of project nightingale, please.' },
];
const FINDING_TYPES: readonly FindingType[] = [...new Set(ENTRIES.map((entry) => entry.type))];
const SEPARATOR = '\n--\n';
const MAX_LINES_PER_CASE = 6;

/** Every built-in type, the custom pattern and the deny list on one action. */
function policyYaml(action: Action): string {
  const builtIn = ['email', 'phone', 'card', 'iban', 'national_id', 'ip_address', 'secret', 'prompt_injection'].map((type) => `${type}: ${action}`).join(', ');
  return `  - id: all-${action}
    input: { ${builtIn},
             custom: [{ name: ${CUSTOM_NAME}, pattern: "PRJ-[0-9]{6}", action: ${action} }],
             deny_terms: { terms: ["project nightingale"], action: ${action} } }
`;
}

/** One provider per format on the mock; per (provider, action) an alias whose policy is `all-<action>`. */
function matrixYaml(mockUrl: string, keyEnv: string): string {
  const provider = (id: string, type: string, baseUrl: string, extra = '') =>
    `  - id: ${id}\n    type: ${type}\n    baseUrl: ${baseUrl}\n    allowPrivateNetwork: true   # the mock listens on loopback\n    apiKey: env:SY_TEST_UPSTREAM_KEY\n${extra}`;
  const deployments = PROVIDERS.map((p) => `  - id: ${p}-chat
    provider: up-${p}
    model: ${p === 'bedrock' ? 'anthropic.claude-3-5-sonnet-20240620-v1:0' : p === 'gemini' ? 'gemini-2.5-flash' : `${p}-upstream`}
    capabilities: [chat, streaming, tools, documents]
    contextWindow: 200000
    maxOutputTokens: 8192
    price: { inputPer1M: "3.00", outputPer1M: "15.00" }
`).join('');
  const aliases = PROVIDERS.flatMap((p) => ACTIONS.map((action) => `  - name: ${alias(p, action)}
    contentPolicy: all-${action}
    routes:
      - { deployment: ${p}-chat, priority: 0 }
`)).join('');
  return `
providers:
${provider('up-openai-compatible', 'openai-compatible', `${mockUrl}/v1`)}${provider('up-anthropic', 'anthropic', mockUrl)}${provider('up-gemini', 'gemini', mockUrl)}  - id: up-bedrock
    type: bedrock
    region: us-east-1
    baseUrl: ${mockUrl}
    allowPrivateNetwork: true   # the mock listens on loopback
    apiKey: env:${BEDROCK_CREDENTIALS_ENV}
deployments:
${deployments}  - id: bulk-chat   # the hostile bodies: a window their millions of estimated tokens fit in
    provider: up-openai-compatible
    model: bulk-upstream
    capabilities: [chat, streaming, tools]
    contextWindow: 10000000
    maxOutputTokens: 8192
    price: { inputPer1M: "3.00", outputPer1M: "15.00" }
contentPolicies:
${ACTIONS.map(policyYaml).join('')}  - id: cards-masked
    input: { card: mask }
aliases:
${aliases}  - name: ${CARDS_MASKED}
    contentPolicy: cards-masked
    routes:
      - { deployment: bulk-chat, priority: 0 }
  - name: ${BULK_TOKENIZE}
    contentPolicy: all-tokenize
    routes:
      - { deployment: bulk-chat, priority: 0 }
tenants:
  - id: acme
apiKeys:
  - id: acme-app
    tenant: acme
    key: env:${keyEnv}
    scopes: [inference, models:read]
`;
}

const alias = (provider: Provider, action: Action) => `${provider}-${action}`;
/** The hostile card-digits body runs under a policy with only `card: mask` (see that test for why). */
const CARDS_MASKED = 'bulk-cards-masked';
const BULK_TOKENIZE = 'bulk-tokenize';

/** One request of the matrix. */
interface Case {
  id: number;
  client: Client;
  placement: Placement;
  provider: Provider;
  action: Action;
  stream: boolean;
  entries: readonly Entry[];
  /** The model answers with a tool call whose arguments carry the echo (recovery in tool-argument deltas). */
  answerAsToolCall?: boolean;
}

/** Tools are declared only where the conversation has a call or the answer must be one: the mock calls a declared tool when it may. */
const usesTools = (c: Case) => c.answerAsToolCall === true || c.placement === 'tool_result' || c.placement === 'tool_arguments';
const nameOf = (c: Case) =>
  `#${c.id} ${c.client} ${c.placement} → ${c.provider} ${c.action} ${c.stream ? 'streamed' : 'buffered'}${c.answerAsToolCall ? ' (tool-call answer)' : ''}`;
const openTag = (c: Case) => `#case-${c.id}#`;
const closeTag = (c: Case) => `#end-${c.id}#`;
const payloadOf = (c: Case) => `${openTag(c)}\n${c.entries.map((entry) => entry.text).join(SEPARATOR)}\n${closeTag(c)}`;

/** What the client saw: the answer's text (or the tool call's `q` argument), or the error. */
interface Outcome {
  text: string | null;
  error: { status: number | undefined; body: unknown; message: string } | null;
}

const TOOL_SCHEMA = { type: 'object' as const, properties: { q: { type: 'string' as const }, note: { type: 'string' as const } } };
const LEAD = { user: 'Look it up.', file: 'Read the file.' };

describe('content-safety matrix: corpus × placement × client format × action × provider format', () => {
  let gw: TestGateway;
  let openai: OpenAI;
  let anthropic: Anthropic;
  let aiOpenai: ReturnType<typeof createOpenAI>;
  let aiAnthropic: ReturnType<typeof createAnthropic>;
  let nextId = 0;

  beforeAll(async () => {
    process.env[BEDROCK_CREDENTIALS_ENV] = BEDROCK_CREDENTIALS;
    gw = await startTestGateway({ yaml: matrixYaml });
    openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key, maxRetries: 0 });
    anthropic = new Anthropic({ baseURL: gw.url, apiKey: gw.key, maxRetries: 0 });
    aiOpenai = createOpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key });
    aiAnthropic = createAnthropic({ baseURL: `${gw.url}/v1`, apiKey: gw.key });
    gw.mock.addScenario({ behaviour: { echo: true, chunks: 60 } });
  });
  afterAll(async () => {
    await gw.close();
  });

  const makeCase = (fields: Omit<Case, 'id'>): Case => ({ id: ++nextId, ...fields });

  // ---- the requests, per client format and placement ----

  async function send(c: Case): Promise<Outcome> {
    try {
      switch (c.client) {
        case 'openai-chat': return await viaChat(c);
        case 'anthropic-messages': return await viaMessages(c);
        case 'openai-responses': return await viaResponses(c);
        default: return await viaAiSdk(c);
      }
    } catch (error) {
      return { text: null, error: asError(error) };
    }
  }

  async function viaChat(c: Case): Promise<Outcome> {
    const payload = payloadOf(c);
    const call = (args: string): OpenAI.ChatCompletionMessageParam => ({ role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'lookup', arguments: args } }] });
    const messages: OpenAI.ChatCompletionMessageParam[] = {
      user: () => [{ role: 'user' as const, content: payload }],
      system: () => [{ role: 'system' as const, content: payload }, { role: 'user' as const, content: LEAD.user }],
      tool_result: () => [{ role: 'user' as const, content: LEAD.user }, call('{"q":"notes"}'), { role: 'tool' as const, tool_call_id: 'call_1', content: payload }],
      tool_arguments: () => [{ role: 'user' as const, content: LEAD.user }, call(JSON.stringify({ note: payload })), { role: 'tool' as const, tool_call_id: 'call_1', content: 'noted' }],
      document: () => [{ role: 'user' as const, content: [{ type: 'text' as const, text: LEAD.file }, { type: 'file' as const, file: { file_data: `data:text/plain;base64,${Buffer.from(payload).toString('base64')}`, filename: 'notes.txt' } }] }],
    }[c.placement]();
    const params = {
      model: alias(c.provider, c.action),
      messages,
      ...(usesTools(c) ? { tools: [{ type: 'function' as const, function: { name: 'lookup', parameters: TOOL_SCHEMA } }], tool_choice: c.answerAsToolCall ? ('required' as const) : ('auto' as const) } : {}),
    };
    if (!c.stream) {
      const completion = await openai.chat.completions.create(params);
      const message = completion.choices[0].message;
      if (c.answerAsToolCall) return { text: argumentQ((message.tool_calls?.[0] as OpenAI.ChatCompletionMessageFunctionToolCall | undefined)?.function.arguments), error: null };
      return { text: message.content, error: null };
    }
    const stream = await openai.chat.completions.create({ ...params, stream: true });
    let text = '';
    let args = '';
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      args += chunk.choices[0]?.delta.tool_calls?.[0]?.function?.arguments ?? '';
    }
    return { text: c.answerAsToolCall ? argumentQ(args) : text, error: null };
  }

  async function viaMessages(c: Case): Promise<Outcome> {
    const payload = payloadOf(c);
    const use = (input: Record<string, unknown>): Anthropic.MessageParam => ({ role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'lookup', input }] });
    const result = (content: string): Anthropic.MessageParam => ({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content }] });
    const lead: Anthropic.MessageParam = { role: 'user', content: LEAD.user };
    const messages: Anthropic.MessageParam[] = {
      user: () => [{ role: 'user' as const, content: payload }],
      system: () => [lead],
      tool_result: () => [lead, use({ q: 'notes' }), result(payload)],
      tool_arguments: () => [lead, use({ note: payload }), result('noted')],
      document: () => [{ role: 'user' as const, content: [{ type: 'document' as const, source: { type: 'text' as const, media_type: 'text/plain' as const, data: payload } }, { type: 'text' as const, text: LEAD.file }] }],
    }[c.placement]();
    const params = {
      model: alias(c.provider, c.action),
      max_tokens: 4096,
      messages,
      ...(c.placement === 'system' ? { system: [{ type: 'text' as const, text: payload }] } : {}),
      ...(usesTools(c) ? { tools: [{ name: 'lookup', input_schema: TOOL_SCHEMA }], tool_choice: c.answerAsToolCall ? { type: 'any' as const } : { type: 'auto' as const } } : {}),
    };
    const message = c.stream ? await anthropic.messages.stream(params).finalMessage() : await anthropic.messages.create(params);
    if (c.answerAsToolCall) {
      const use = message.content.find((block) => block.type === 'tool_use');
      return { text: use ? (use.input as { q?: string }).q ?? null : null, error: null };
    }
    return { text: message.content.filter((block) => block.type === 'text').map((block) => block.text).join(''), error: null };
  }

  async function viaResponses(c: Case): Promise<Outcome> {
    const payload = payloadOf(c);
    const call = (args: string): OpenAI.Responses.ResponseInputItem => ({ type: 'function_call', call_id: 'call_1', name: 'lookup', arguments: args });
    const output = (text: string): OpenAI.Responses.ResponseInputItem => ({ type: 'function_call_output', call_id: 'call_1', output: text });
    const lead: OpenAI.Responses.ResponseInputItem = { role: 'user', content: LEAD.user };
    const input: OpenAI.Responses.ResponseInputItem[] = {
      user: () => [{ role: 'user' as const, content: payload }],
      system: () => [lead],
      tool_result: () => [lead, call('{"q":"notes"}'), output(payload)],
      tool_arguments: () => [lead, call(JSON.stringify({ note: payload })), output('noted')],
      document: () => [{ role: 'user' as const, content: [{ type: 'input_text' as const, text: LEAD.file }, { type: 'input_file' as const, file_data: `data:text/plain;base64,${Buffer.from(payload).toString('base64')}`, filename: 'notes.txt' }] }],
    }[c.placement]();
    const params = {
      model: alias(c.provider, c.action),
      input,
      ...(c.placement === 'system' ? { instructions: payload } : {}),
      ...(usesTools(c) ? { tools: [{ type: 'function' as const, name: 'lookup', parameters: TOOL_SCHEMA, strict: false }], tool_choice: c.answerAsToolCall ? ('required' as const) : ('auto' as const) } : {}),
    };
    if (!c.stream) {
      const response = await openai.responses.create(params);
      if (c.answerAsToolCall) {
        const item = response.output.find((entry) => entry.type === 'function_call');
        return { text: argumentQ(item?.arguments), error: null };
      }
      return { text: response.output_text, error: null };
    }
    const stream = await openai.responses.create({ ...params, stream: true });
    let text = '';
    let args = '';
    for await (const event of stream) {
      if (event.type === 'response.output_text.delta') text += event.delta;
      if (event.type === 'response.function_call_arguments.delta') args += event.delta;
    }
    return { text: c.answerAsToolCall ? argumentQ(args) : text, error: null };
  }

  async function viaAiSdk(c: Case): Promise<Outcome> {
    const payload = payloadOf(c);
    const call = (input: Record<string, unknown>): ModelMessage => ({ role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'call_1', toolName: 'lookup', input }] });
    const result = (value: string): ModelMessage => ({ role: 'tool', content: [{ type: 'tool-result', toolCallId: 'call_1', toolName: 'lookup', output: { type: 'text', value } }] });
    const lead: ModelMessage = { role: 'user', content: LEAD.user };
    const messages: ModelMessage[] = {
      user: () => [{ role: 'user' as const, content: payload }],
      system: () => [lead],
      tool_result: () => [lead, call({ q: 'notes' }), result(payload)],
      tool_arguments: () => [lead, call({ note: payload }), result('noted')],
      document: () => [{ role: 'user' as const, content: [{ type: 'text' as const, text: LEAD.file }, { type: 'file' as const, data: Buffer.from(payload), mediaType: 'text/plain', filename: 'notes.txt' }] }],
    }[c.placement]();
    const name = alias(c.provider, c.action);
    const model = c.client === 'ai-sdk-openai' ? aiOpenai(name) : c.client === 'ai-sdk-openai-chat' ? aiOpenai.chat(name) : aiAnthropic(name);
    const options = {
      model,
      messages,
      ...(c.placement === 'system' ? { system: payload } : {}),
      ...(usesTools(c) ? { tools: { lookup: tool({ inputSchema: z.object({ q: z.string().optional(), note: z.string().optional() }) }) }, toolChoice: c.answerAsToolCall ? ('required' as const) : ('auto' as const) } : {}),
      maxRetries: 0,
      // The Responses model sends text/plain files only when told to (it refuses all but PDFs by default).
      providerOptions: { openai: { store: false, passThroughUnsupportedFiles: true } },
    };
    if (!c.stream) {
      const answer = await generateText(options);
      if (c.answerAsToolCall) return { text: (answer.toolCalls[0]?.input as { q?: string } | undefined)?.q ?? null, error: null };
      return { text: answer.text, error: null };
    }
    const errors: unknown[] = [];
    const answer = streamText({ ...options, onError: ({ error }) => void errors.push(error) });
    let text = '';
    for await (const piece of answer.textStream) text += piece;
    if (errors.length > 0) return { text: null, error: asError(errors[0]) };
    if (c.answerAsToolCall) return { text: ((await answer.toolCalls)[0]?.input as { q?: string } | undefined)?.q ?? null, error: null };
    return { text, error: null };
  }

  // ---- what the mock received, and the checks ----

  /** Every string of a recorded body, JSON strings (tool arguments) opened too. */
  function stringsOf(node: unknown, out: string[] = []): string[] {
    if (typeof node === 'string') {
      out.push(node);
      if (node.startsWith('{') || node.startsWith('[')) {
        try {
          stringsOf(JSON.parse(node), out);
        } catch {
          // not JSON: the text itself was collected
        }
      }
    } else if (Array.isArray(node)) for (const child of node) stringsOf(child, out);
    else if (node !== null && typeof node === 'object') for (const child of Object.values(node)) stringsOf(child, out);
    return out;
  }

  /** The case's entries as they appear between its tags in `text`, or null when the tags are not there. */
  function segmentsIn(c: Case, text: string): string[] | null {
    const start = text.indexOf(`${openTag(c)}\n`);
    const end = text.indexOf(`\n${closeTag(c)}`, start);
    if (start < 0 || end < 0) return null;
    return text.slice(start + openTag(c).length + 1, end).split(SEPARATOR);
  }

  const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

  /** How an entry must look at the mock: masked, a placeholder of its type's grammar, or as sent. */
  function upstreamProblem(entry: Entry, action: Action, seen: string): string | null {
    const [before, after] = splitOnce(entry.text, entry.value);
    if (action === 'log') return seen === entry.text ? null : `expected as sent, got ${JSON.stringify(seen)}`;
    if (action === 'mask') {
      const expected = `${before}${maskMarker(entry.type)}${after}`;
      return seen === expected ? null : `expected ${JSON.stringify(expected)}, got ${JSON.stringify(seen)}`;
    }
    const pattern = new RegExp(`^${escape(before)}\\[PII1_${typeCode(entry.type)}_[A-Z2-7]{13}_[A-Z2-7]{10}\\]${escape(after)}$`);
    return pattern.test(seen) ? null : `expected a ${typeCode(entry.type)} placeholder in place of the value, got ${JSON.stringify(seen)}`;
  }

  /** How an entry must look at the client: tokenized values recovered exactly, masked as masked, logged as sent. */
  function clientProblem(entry: Entry, action: Action, seen: string): string | null {
    if (action === 'mask') return upstreamProblem(entry, action, seen);
    return seen === entry.text ? null : `expected ${JSON.stringify(entry.text)}, got ${JSON.stringify(seen)}`;
  }

  /** Whether the mock's echo carries this placement back (see the suite's comment). */
  function echoed(c: Case): boolean {
    if (c.answerAsToolCall) return true;
    if (c.placement === 'tool_arguments') return false;
    if (c.placement === 'document') return c.provider === 'openai-compatible'; // a text part there; a document block elsewhere
    return true;
  }

  /** Sends every case, a few at a time, and returns what went wrong, each naming its case. */
  async function runCases(cases: readonly Case[]): Promise<string[]> {
    const outcomes = new Map<number, Outcome>();
    let next = 0;
    const worker = async () => {
      while (next < cases.length) {
        const c = cases[next++];
        outcomes.set(c.id, await send(c));
      }
    };
    await Promise.all(Array.from({ length: 6 }, worker));
    const received = gw.mock.requests().map((request) => stringsOf(request.body));
    const problems: string[] = [];
    for (const c of cases) {
      const outcome = outcomes.get(c.id)!;
      const upstream = received.filter((strings) => strings.some((text) => text.includes(openTag(c))));
      // At most a few lines a case: a broken placement would otherwise list every entry of the corpus.
      let failures = 0;
      const fail = (what: string) => {
        if (++failures <= MAX_LINES_PER_CASE) problems.push(`${nameOf(c)}: ${what}`);
        else if (failures === MAX_LINES_PER_CASE + 1) problems.push(`${nameOf(c)}: … and more (only the first ${MAX_LINES_PER_CASE} are listed)`);
      };
      if (c.action === 'block') {
        checkBlock(c, outcome, upstream.length, fail);
        continue;
      }
      if (outcome.error) {
        fail(`failed: ${outcome.error.status} ${outcome.error.message}`);
        continue;
      }
      if (upstream.length !== 1) {
        fail(`the mock received it ${upstream.length} times`);
        continue;
      }
      const sentText = upstream[0].find((text) => segmentsIn(c, text) !== null);
      const sent = sentText === undefined ? null : segmentsIn(c, sentText);
      if (!sent || sent.length !== c.entries.length) {
        fail(`the mock's copy lost its shape (${sent?.length ?? 'no'} segments)`);
        continue;
      }
      c.entries.forEach((entry, index) => {
        const problem = upstreamProblem(entry, c.action, sent[index]);
        if (problem) fail(`upstream, ${entry.type} ${JSON.stringify(entry.value)}: ${problem}`);
      });
      if (c.action !== 'log') {
        const joined = upstream[0].join('\n');
        for (const entry of c.entries) if (joined.includes(entry.value)) fail(`upstream holds the value ${JSON.stringify(entry.value)} somewhere`);
      }
      if (c.action === 'tokenize') {
        // The same value gets the same placeholder within a request: the model sees consistent references.
        const byValue = new Map<string, Set<string>>();
        c.entries.forEach((entry, index) => {
          const placeholder = /\[PII1_[A-Z]+_[A-Z2-7]{13}_[A-Z2-7]{10}\]/.exec(sent[index])?.[0];
          if (placeholder) byValue.set(entry.value, (byValue.get(entry.value) ?? new Set()).add(placeholder));
        });
        for (const [value, placeholders] of byValue) if (placeholders.size !== 1) fail(`${JSON.stringify(value)} got ${placeholders.size} different placeholders`);
      }
      const back = outcome.text === null ? null : segmentsIn(c, outcome.text);
      if (!echoed(c)) {
        if (back !== null) fail('the answer unexpectedly carries the case (update echoed())');
        continue;
      }
      if (!back || back.length !== c.entries.length) {
        fail(`the answer lost its shape: ${JSON.stringify(outcome.text?.slice(0, 200))}`);
        continue;
      }
      c.entries.forEach((entry, index) => {
        const problem = clientProblem(entry, c.action, back[index]);
        if (problem) fail(`client, ${entry.type} ${JSON.stringify(entry.value)}: ${problem}`);
      });
      if (outcome.text!.includes('[PII1_')) fail('a placeholder reached the client');
    }
    return problems;
  }

  /** A block: 400 in the client's own format, naming the policy and the type, never the value; nothing upstream. */
  function checkBlock(c: Case, outcome: Outcome, upstreamCalls: number, fail: (what: string) => void): void {
    const [entry] = c.entries;
    if (upstreamCalls !== 0) fail(`the mock received it ${upstreamCalls} times`);
    if (!outcome.error) return void fail(`not blocked: answered ${JSON.stringify(outcome.text?.slice(0, 120))}`);
    const { status, body, message } = outcome.error;
    if (status !== 400) fail(`status ${status}, not 400`);
    const anthropicFormat = c.client === 'anthropic-messages' || c.client === 'ai-sdk-anthropic';
    const envelope = body as { type?: string; error?: { type?: string; code?: string; message?: string } } | null;
    if (anthropicFormat) {
      if (envelope?.type !== 'error' || envelope.error?.type !== 'invalid_request_error') fail(`not an Anthropic error body: ${JSON.stringify(body)}`);
    } else if (envelope?.error?.code !== 'content_policy_violation') {
      fail(`not an OpenAI error body with code content_policy_violation: ${JSON.stringify(body)}`);
    }
    const said = envelope?.error?.message ?? message;
    if (!said.includes(`content policy 'all-block'`) || !said.includes(`'${entry.type}'`)) fail(`the message does not name the policy and '${entry.type}': ${said}`);
    if (said.includes(entry.value) || JSON.stringify(body).includes(entry.value)) fail('the error carries the value');
  }

  function asError(error: unknown): Outcome['error'] {
    // The OpenAI SDK keeps the envelope's `error` member, the Anthropic SDK the whole envelope.
    if (error instanceof OpenAI.APIError) return { status: error.status, body: { error: error.error }, message: error.message };
    if (error instanceof Anthropic.APIError) return { status: error.status, body: error.error ?? null, message: error.message };
    const callError = error as { statusCode?: number; responseBody?: string; message?: string };
    let body: unknown = null;
    try {
      body = callError.responseBody ? JSON.parse(callError.responseBody) : null;
    } catch {
      body = callError.responseBody;
    }
    return { status: callError.statusCode, body, message: String(callError.message ?? error) };
  }

  // ---- the matrix ----

  const clientCount = { cases: 0, requests: 0 };
  afterAll(() => {
    // The size of the matrix, for the report (one request a case; a case checks every entry it carries).
    process.stdout.write(`content-safety matrix: ${clientCount.requests} requests, ${clientCount.cases} entry checks\n`);
  });
  const tally = (cases: readonly Case[]) => {
    clientCount.requests += cases.length;
    clientCount.cases += cases.reduce((sum, c) => sum + c.entries.length, 0);
  };

  describe.each(CLIENTS)('%s', (client) => {
    for (const action of ['mask', 'tokenize', 'log'] as const) {
      test(`${action}: every finding type in every placement, to OpenAI-compatible and Anthropic routes, buffered and streamed`, async () => {
        const cases: Case[] = [];
        for (const placement of placementsOf(client)) {
          for (const provider of ['openai-compatible', 'anthropic'] as const) {
            for (const stream of MODES) cases.push(makeCase({ client, placement, provider, action, stream, entries: ENTRIES }));
          }
        }
        tally(cases);
        expect(await runCases(cases)).toEqual([]);
      });
    }

    test('block: each finding type in each placement is refused in the client format, nothing sent; streamed too, one placement a type', async () => {
      const cases: Case[] = [];
      const placements = placementsOf(client);
      FINDING_TYPES.forEach((type, typeIndex) => {
        const ofType = ENTRIES.filter((entry) => entry.type === type);
        placements.forEach((placement, placementIndex) => {
          // The refusal comes before any stream starts, the same in both modes: every placement buffered, and the
          // client's streaming call in one placement per type (a different one for each type).
          const modes = placementIndex === typeIndex % placements.length ? MODES : [false];
          for (const stream of modes) {
            // A different value (and frame) of the type in each placement; routes alternate (nothing reaches either).
            const entry = ofType[(typeIndex + placementIndex * 3 + (stream ? 1 : 0)) % ofType.length];
            const provider = (placementIndex + typeIndex) % 2 === 0 ? 'openai-compatible' : 'anthropic';
            cases.push(makeCase({ client, placement, provider, action: 'block', stream, entries: [entry] }));
          }
        });
      });
      tally(cases);
      expect(await runCases(cases)).toEqual([]);
    });

    test('tokenize, the model answers with a tool call: the values come back exactly in its arguments, buffered and streamed', async () => {
      const cases: Case[] = [];
      for (const provider of ['openai-compatible', 'anthropic'] as const) {
        for (const stream of MODES) cases.push(makeCase({ client, placement: 'user', provider, action: 'tokenize', stream, entries: ENTRIES, answerAsToolCall: true }));
      }
      tally(cases);
      expect(await runCases(cases)).toEqual([]);
    });
  });

  describe('hostile input over HTTP: a correct answer or a clear error, never a crash; the gateway answers normally afterwards', () => {
    const HOSTILE_TIMEOUT = { timeout: 60_000 };
    /** What the mock received as the last user message's text (for the one request the test just made). */
    const lastUpstreamUser = (): string => {
      const body = gw.mock.requests().at(-1)!.body as { messages: Array<{ role: string; content: unknown }> };
      const content = body.messages.filter((message) => message.role === 'user').at(-1)!.content;
      return typeof content === 'string' ? content : (content as Array<{ text?: string }>).map((part) => part.text ?? '').join('');
    };
    const stillAnswers = async () => {
      const completion = await openai.chat.completions.create({ model: alias('openai-compatible', 'log'), messages: [{ role: 'user', content: 'Still there?' }] });
      expect(completion.choices[0].message.content).toBe('Still there?');
    };

    test('a body near the 4 MiB limit of candidate card digits ("4111 " repeated) under card: mask — only the real card is masked; one byte group past the limit is a 413', async () => {
      // Groups of four: every 16-digit run is 4111411141114111, which fails Luhn; the real card after it is found.
      const groups = Math.floor((4 * 1024 * 1024 - 2_000) / 5 / 4) * 4;
      const digits = '4111 '.repeat(groups);
      const content = `${digits}\nCard: 4111 1111 1111 1111.`;
      const completion = await openai.chat.completions.create({ model: CARDS_MASKED, messages: [{ role: 'user', content }] }, HOSTILE_TIMEOUT);
      const expected = `${digits}\nCard: [CARD].`;
      expect(lastUpstreamUser() === expected).toBe(true);
      expect(completion.choices[0].message.content === expected).toBe(true);
      const tooBig = await openai.chat.completions
        .create({ model: CARDS_MASKED, messages: [{ role: 'user', content: `${'4111 '.repeat(groups + 1_000)}` }] }, HOSTILE_TIMEOUT)
        .catch((error: unknown) => error);
      expect(tooBig).toBeInstanceOf(OpenAI.APIError);
      expect((tooBig as InstanceType<typeof OpenAI.APIError>).status).toBe(413);
      expect((tooBig as InstanceType<typeof OpenAI.APIError>).message).toMatch(/4 MiB/);
      await stillAnswers();
    }, 60_000);

    // Streamed (the holdback path, the placeholders cut across the mock's 60 events of ~60 KB); the buffered path costs
    // as much again (~10 s on two shared cores) and recovers through the same vault: the matrix covers it.
    test('100,000 emails in one message under tokenize: each gets a placeholder of its own; the streamed echo recovers every one', async () => {
      const emails = Array.from({ length: 100_000 }, (_, i) => `user${i}@example.com`);
      const content = emails.join(' ');
      gw.mock.clearRequests();
      const { data: chunks, response } = await openai.chat.completions
        .create({ model: BULK_TOKENIZE, stream: true, messages: [{ role: 'user', content }] }, HOSTILE_TIMEOUT)
        .withResponse();
      let answer = '';
      for await (const chunk of chunks) answer += chunk.choices[0]?.delta.content ?? '';
      const sent = lastUpstreamUser();
      expect(sent.includes('@example.com')).toBe(false);
      const placeholders = sent.split(' ');
      expect(placeholders).toHaveLength(100_000);
      expect(placeholders.every((placeholder) => /^\[PII1_EMAIL_[A-Z2-7]{13}_[A-Z2-7]{10}\]$/.test(placeholder))).toBe(true);
      expect(new Set(placeholders).size).toBe(100_000);
      expect(answer.length).toBe(content.length);
      expect(answer === content).toBe(true);
      const events = await gw.requestEvents(response.headers.get('x-request-id')!);
      const admitted = events.find((event) => event.type === 'RequestAdmitted')!.data as RequestAdmitted['data'];
      expect(admitted.contentPolicy?.manifest?.placeholders).toEqual({ created: 100_000 });
      expect(admitted.contentPolicy?.manifest?.findings).toEqual([{ type: 'email', direction: 'input', action: 'tokenize', count: 100_000 }]);
      const completed = events.find((event) => event.type === 'RequestCompleted')!.data as RequestCompleted['data'];
      expect(completed.contentPolicy?.placeholders).toEqual({ resolved: 100_000, unresolved: 0 });
      await stillAnswers();
    }, 60_000);

    /** An object `levels` deep whose innermost object holds two emails. */
    const nested = (levels: number): Record<string, unknown> => {
      let node: Record<string, unknown> = { to: 'ada@example.com', cc: 'grace@example.org' };
      for (let i = 1; i < levels; i++) node = { next: node };
      return node;
    };
    const innermost = (node: Record<string, unknown>): Record<string, unknown> => {
      let at = node;
      while (at.next) at = at.next as Record<string, unknown>;
      return at;
    };
    const TOKEN = /^\[PII1_EMAIL_[A-Z2-7]{13}_[A-Z2-7]{10}\]$/;

    test('tool-call arguments nested to the JSON depth limit (64) with emails at the bottom are tokenized there; one level deeper is a 400 naming the field', async () => {
      const messages = (levels: number): OpenAI.ChatCompletionMessageParam[] => [
        { role: 'user', content: 'Send it.' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'send', arguments: JSON.stringify(nested(levels)) } }] },
        { role: 'tool', tool_call_id: 'call_1', content: 'sent' },
      ];
      const tools: OpenAI.ChatCompletionTool[] = [{ type: 'function', function: { name: 'send', parameters: { type: 'object', properties: {} } } }];
      gw.mock.clearRequests();
      await openai.chat.completions.create({ model: alias('openai-compatible', 'tokenize'), messages: messages(64), tools }, HOSTILE_TIMEOUT);
      const upstream = gw.mock.requests().at(-1)!.body as { messages: Array<{ tool_calls?: Array<{ function: { arguments: string } }> }> };
      const args = JSON.parse(upstream.messages.find((message) => message.tool_calls)!.tool_calls![0].function.arguments) as Record<string, unknown>;
      expect(innermost(args)).toEqual({ to: expect.stringMatching(TOKEN), cc: expect.stringMatching(TOKEN) });
      expect(JSON.stringify(upstream)).not.toMatch(/ada@example|grace@example/);

      const tooDeep = await openai.chat.completions.create({ model: alias('openai-compatible', 'tokenize'), messages: messages(65), tools }).catch((error: unknown) => error);
      expect(tooDeep).toBeInstanceOf(OpenAI.BadRequestError);
      expect((tooDeep as InstanceType<typeof OpenAI.APIError>).message).toMatch(/messages\[1\]\.tool_calls\[0\]\.function\.arguments nests deeper than 64 levels/);

      // Anthropic: the input is JSON in the body itself, bounded by the body's own depth check.
      gw.mock.clearRequests();
      const conversation = (levels: number): Anthropic.MessageParam[] => [
        { role: 'user', content: 'Send it.' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'send', input: nested(levels) }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'sent' }] },
      ];
      const anthropicTools: Anthropic.Tool[] = [{ name: 'send', input_schema: { type: 'object', properties: {} } }];
      await anthropic.messages.create({ model: alias('anthropic', 'tokenize'), max_tokens: 100, messages: conversation(64), tools: anthropicTools });
      const sent = gw.mock.requests().at(-1)!.body as { messages: Array<{ content: Array<{ type: string; input?: Record<string, unknown> }> }> };
      const input = sent.messages.flatMap((message) => message.content).find((block) => block.type === 'tool_use')!.input!;
      expect(innermost(input)).toEqual({ to: expect.stringMatching(TOKEN), cc: expect.stringMatching(TOKEN) });
      const anthropicTooDeep = await anthropic.messages.create({ model: alias('anthropic', 'tokenize'), max_tokens: 100, messages: conversation(65), tools: anthropicTools }).catch((error: unknown) => error);
      expect(anthropicTooDeep).toBeInstanceOf(Anthropic.BadRequestError);
      expect((anthropicTooDeep as InstanceType<typeof Anthropic.APIError>).message).toMatch(/nests deeper than|too deep|depth/i);
      await stillAnswers();
    });
  });

  test('Gemini and Bedrock routes: tokenized values (emails among them) recovered through their stream formats, from every client', async () => {
    const cases: Case[] = [];
    for (const client of CLIENTS) {
      for (const provider of ['gemini', 'bedrock'] as const) {
        cases.push(makeCase({ client, placement: 'user', provider, action: 'tokenize', stream: true, entries: ENTRIES }));
      }
    }
    tally(cases);
    expect(await runCases(cases)).toEqual([]);
  });
});

/** The text before and after the first occurrence of `part`. */
function splitOnce(text: string, part: string): [string, string] {
  const at = text.indexOf(part);
  return [text.slice(0, at), text.slice(at + part.length)];
}

/** The `q` argument of a tool call's JSON arguments, or null. */
function argumentQ(args: string | undefined): string | null {
  if (!args) return null;
  try {
    return (JSON.parse(args) as { q?: string }).q ?? null;
  } catch {
    return null;
  }
}
