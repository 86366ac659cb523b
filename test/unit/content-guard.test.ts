import type { ContentPolicyDefinition } from '../../events/index.js';
import type { ChatResponse, RelayedStreamEvent } from '../../modules/canonical/index.js';
import { ContentGuard, ContentPolicyViolation, PlaceholderKeys, UnresolvedPlaceholders, normalizeContentPolicy } from '../../modules/content-safety/index.js';
import type { ClientStreamEncoder } from '../../modules/inference/formats/client-stream-encoder.js';
import { GatewayFault } from '../../modules/inference/pipeline/gateway-fault.js';
import { GuardedStreamEncoder } from '../../modules/inference/pipeline/guarded-stream-encoder.js';
import { chatRequest } from '../support/provider-fixtures.js';

const PLACEHOLDER = /\[PII1_[A-Z0-9_]+\]/g;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function policy(definition: Record<string, unknown>): { applied: { sources: Array<{ policyId: string; version: number; attachedTo: 'tenant' }> }; definition: ContentPolicyDefinition } {
  return { applied: { sources: [{ policyId: 'p', version: 3, attachedTo: 'tenant' }] }, definition: normalizeContentPolicy(definition) };
}

function guardFor(definition: Record<string, unknown>, requestId = 'req-1'): ContentGuard {
  return new ContentGuard(policy(definition), { tenantId: 'acme', requestId, sessionId: null }, { keys: KEYS, sessionVault: null });
}

const KEYS = PlaceholderKeys.random();

function answer(text: string, args: string | null = null): ChatResponse {
  return {
    providerRequestId: null,
    usage: null,
    choices: [{ index: 0, text, toolCalls: args === null ? [] : [{ id: 'c1', name: 'send', arguments: args }], stopReason: args === null ? 'stop' : 'tool_calls', reasoning: [], logprobs: null }],
  };
}

/** A client encoder that writes each event as one JSON line: what the client would have received, in order. */
class RecordingEncoder implements ClientStreamEncoder {
  readonly contentType = 'text/plain';
  readonly events: RelayedStreamEvent[] = [];
  encode(event: RelayedStreamEvent): string {
    this.events.push(event);
    return `${JSON.stringify(event)}\n`;
  }
  finish(): string {
    return 'END\n';
  }
  error(): string {
    return 'ERROR\n';
  }
  text(choice = 0): string {
    return this.events.filter((e): e is Extract<RelayedStreamEvent, { type: 'text' }> => e.type === 'text' && e.choice === choice).map((e) => e.text).join('');
  }
  args(index: number): string {
    return this.events.filter((e): e is Extract<RelayedStreamEvent, { type: 'tool_call' }> => e.type === 'tool_call' && e.index === index).map((e) => e.arguments).join('');
  }
}

/** Random cut points: every chunking a provider's stream might use, one character per event included. */
function randomSplit(text: string, random: () => number): string[] {
  const pieces: string[] = [];
  let at = 0;
  while (at < text.length) {
    const size = random() < 0.3 ? 1 : 1 + Math.floor(random() * 12);
    pieces.push(text.slice(at, at + size));
    at += size;
  }
  return pieces;
}

function seeded(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1664525 + 1013904223) % 4294967296;
    return state / 4294967296;
  };
}

describe('ContentGuard: input', () => {
  test('tokenizes and masks every place content lives, never tool names, schemas or keys of arguments', async () => {
    const guard = guardFor({ input: { email: 'tokenize', iban: 'mask' } });
    const request = chatRequest({
      messages: [
        { role: 'system', content: [{ type: 'text', text: 'Escalate to boss@example.com' }] },
        { role: 'user', content: [{ type: 'text', text: 'I am ada@example.com' }] },
        { role: 'assistant', content: [], toolCalls: [{ id: 'c1', name: 'email_lookup', arguments: '{"email":"ada@example.com","iban":"GB82 WEST 1234 5698 7654 32"}' }] },
        { role: 'tool', toolCallId: 'c1', content: [{ type: 'text', text: 'found ada@example.com' }] },
      ],
      tools: [{ name: 'email_lookup', description: 'Look up an email like x@example.com', parameters: { type: 'object', properties: { email: { type: 'string' } } }, strict: null }],
    });
    const sent = await guard.inspectRequest(request);
    expect(sent).not.toBe(request);
    expect(request.messages[1].content[0]).toEqual({ type: 'text', text: 'I am ada@example.com' }); // the original is untouched
    const texts = JSON.stringify(sent.messages);
    expect(texts).not.toContain('example.com');
    expect(texts).not.toContain('WEST');
    const call = (sent.messages[2] as { toolCalls: Array<{ name: string; arguments: string }> }).toolCalls[0];
    expect(call.name).toBe('email_lookup');
    expect(Object.keys(JSON.parse(call.arguments))).toEqual(['email', 'iban']);
    expect(JSON.parse(call.arguments).iban).toBe('[IBAN]');
    // The same value gets the same placeholder across the request: the model sees one person, not three.
    const placeholders = texts.match(PLACEHOLDER)!;
    expect(new Set(placeholders.filter((p) => p.startsWith('[PII1_EM'))).size).toBe(2);
    expect(sent.tools).toBe(request.tools);
    expect(guard.admitted().manifest?.findings).toEqual(expect.arrayContaining([
      { type: 'email', direction: 'input', action: 'tokenize', count: 4 },
      { type: 'iban', direction: 'input', action: 'mask', count: 1 },
    ]));
    expect(guard.admitted().manifest?.placeholders).toEqual({ created: 2 });
    expect(guard.admitted().manifest?.digest).toMatch(/^[0-9a-f]{64}$/);
  });

  test('documents the gateway can read are scanned (text, custom content, base64 plain text, title); a PDF is sent as it is', async () => {
    const guard = guardFor({ input: { email: 'mask' } });
    const pdf = { type: 'base64' as const, mediaType: 'application/pdf', data: Buffer.from('%PDF-1.7 ada@example.com').toString('base64') };
    const request = chatRequest({
      messages: [{ role: 'user', content: [
        { type: 'document', source: { type: 'text', text: 'Mail ada@example.com' }, title: 'From ada@example.com', context: null, filename: null, at: 'messages.0.content.0' },
        { type: 'document', source: { type: 'content', texts: ['a', 'b@example.org'] }, title: null, context: null, filename: null, at: 'messages.0.content.1' },
        { type: 'document', source: { type: 'base64', mediaType: 'text/plain', data: Buffer.from('c@example.net').toString('base64') }, title: null, context: null, filename: 'c.txt', at: 'messages.0.content.2' },
        { type: 'document', source: pdf, title: null, context: null, filename: 'd.pdf', at: 'messages.0.content.3' },
      ] }],
    });
    const sent = await guard.inspectRequest(request);
    const parts = sent.messages[0].content as Array<{ source: { type: string; text?: string; texts?: string[]; data?: string }; title: string | null }>;
    expect(parts[0].source.text).toBe('Mail [EMAIL]');
    expect(parts[0].title).toBe('From [EMAIL]');
    expect(parts[1].source.texts).toEqual(['a', '[EMAIL]']);
    expect(Buffer.from(parts[2].source.data!, 'base64').toString()).toBe('[EMAIL]');
    expect(parts[3].source).toBe(pdf);
  });

  test('nothing found: the same request object goes on, and the manifest has no digest', async () => {
    const guard = guardFor({ input: { email: 'tokenize' } });
    const request = chatRequest();
    expect(await guard.inspectRequest(request)).toBe(request);
    expect(guard.admitted().manifest).toMatchObject({ findings: [], digest: null });
  });

  test('block names the type, never the value', async () => {
    const guard = guardFor({ input: { card: 'block', email: 'tokenize' } });
    const error = await guard.inspectRequest(chatRequest({ messages: [{ role: 'user', content: [{ type: 'text', text: 'card 4111 1111 1111 1111' }] }] })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ContentPolicyViolation);
    expect((error as ContentPolicyViolation).findingType).toBe('card');
    expect((error as Error).message).not.toContain('4111');
  });

  test('the placeholder instruction is added (after the system messages) only when asked and something was tokenized', async () => {
    const request = chatRequest({ messages: [{ role: 'system', content: [{ type: 'text', text: 'Be brief.' }] }, { role: 'user', content: [{ type: 'text', text: 'ada@example.com' }] }] });
    const withIt = await guardFor({ input: { email: 'tokenize' }, placeholderInstruction: true }).inspectRequest(request);
    expect(withIt.messages.map((m) => m.role)).toEqual(['system', 'system', 'user']);
    expect(JSON.stringify(withIt.messages[1])).toContain('placeholder');
    const without = await guardFor({ input: { email: 'tokenize' } }).inspectRequest(request);
    expect(without.messages).toHaveLength(2);
  });

  test('embeddings inputs: tokenize acts as mask (nothing comes back to recover)', () => {
    const guard = guardFor({ input: { email: 'tokenize' } });
    expect(guard.inspectTexts(['mail ada@example.com', 'nothing'])).toEqual(['mail [EMAIL]', 'nothing']);
  });
});

describe('ContentGuard: buffered answers', () => {
  test('recovers placeholders in text and in tool arguments, escaped as JSON needs', async () => {
    const guard = guardFor({ input: { email: 'tokenize', custom: [{ name: 'quoted', pattern: 'Q"[0-9]{3}', action: 'tokenize' }] } });
    const sent = await guard.inspectRequest(chatRequest({ messages: [{ role: 'user', content: [{ type: 'text', text: 'ada@example.com has code Q"123' }] }] }));
    const placeholders = JSON.stringify(sent.messages).match(PLACEHOLDER)!;
    const [email, code] = placeholders;
    const out = guard.inspectAnswer(answer(`Mail ${email}, code ${code}`, JSON.stringify({ to: email, code })));
    expect(out.choices[0].text).toBe('Mail ada@example.com, code Q"123');
    expect(JSON.parse(out.choices[0].toolCalls[0].arguments)).toEqual({ to: 'ada@example.com', code: 'Q"123' });
    expect(guard.completed().placeholders).toEqual({ resolved: 4, unresolved: 0 });
  });

  test('a placeholder of another request, or an altered one, stays as it is; reject-buffered fails the answer instead', async () => {
    const first = guardFor({ input: { email: 'tokenize' } }, 'req-A');
    const [theirs] = JSON.stringify((await first.inspectRequest(chatRequest({ messages: [{ role: 'user', content: [{ type: 'text', text: 'ada@example.com' }] }] }))).messages).match(PLACEHOLDER)!;
    const mine = guardFor({ input: { email: 'tokenize' } }, 'req-B');
    const [own] = JSON.stringify((await mine.inspectRequest(chatRequest({ messages: [{ role: 'user', content: [{ type: 'text', text: 'ada@example.com' }] }] }))).messages).match(PLACEHOLDER)!;
    expect(theirs).not.toBe(own);
    const altered = own.slice(0, -2) + (own.at(-2) === 'A' ? 'B' : 'A') + ']';
    const out = mine.inspectAnswer(answer(`${theirs} ${altered} ${own}`));
    expect(out.choices[0].text).toBe(`${theirs} ${altered} ada@example.com`);
    expect(mine.completed().placeholders).toEqual({ resolved: 1, unresolved: 2 });

    const strict = guardFor({ input: { email: 'tokenize' }, unresolvedTokenPolicy: 'reject-buffered' }, 'req-C');
    await strict.inspectRequest(chatRequest({ messages: [{ role: 'user', content: [{ type: 'text', text: 'ada@example.com' }] }] }));
    expect(() => strict.inspectAnswer(answer(`Hello ${theirs}`))).toThrow(UnresolvedPlaceholders);
  });

  test('output rules: mask and block on the model\'s own text; reasoning is checked too', () => {
    const guard = guardFor({ output: { email: 'mask', secret: 'block' } });
    expect(guard.inspectAnswer(answer('Write to grace@example.org')).choices[0].text).toBe('Write to [EMAIL]');
    expect(() => guard.inspectAnswer(answer('key: sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD'))).toThrow(ContentPolicyViolation);
  });
});

describe('GuardedStreamEncoder', () => {
  test('fuzzed over random chunkings: the client receives exactly what the buffered path gives, text and interleaved tool arguments', async () => {
    for (let seed = 1; seed <= 40; seed++) {
      const random = seeded(seed);
      const guard = guardFor({ input: { email: 'tokenize', phone: 'tokenize' }, output: { iban: 'mask' } }, `req-${seed}`);
      const sent = await guard.inspectRequest(chatRequest({ messages: [{ role: 'user', content: [{ type: 'text', text: 'ada@example.com, grace@example.org, +44 20 7946 0958 — ünïcødé 😀' }] }] }));
      const tokenized = (sent.messages[0].content[0] as { text: string }).text;
      const modelText = `Noted: ${tokenized}. IBAN GB82 WEST 1234 5698 7654 32. Done 😀`;
      const modelArgs = [JSON.stringify({ to: tokenized.split(',')[0] }), JSON.stringify({ cc: tokenized.split(',')[1] })];
      const inner = new RecordingEncoder();
      const encoder = new GuardedStreamEncoder(inner, guard);
      encoder.encode({ type: 'tool_call', choice: 0, index: 0, id: 'c0', name: 'send', arguments: '' });
      encoder.encode({ type: 'tool_call', choice: 0, index: 1, id: 'c1', name: 'send', arguments: '' });
      const argPieces = modelArgs.map((args) => randomSplit(args, random));
      // The upstream interleaves the two calls' argument deltas, as OpenAI may.
      while (argPieces[0].length || argPieces[1].length) {
        for (const index of [0, 1]) {
          const piece = argPieces[index].shift();
          if (piece !== undefined) encoder.encode({ type: 'tool_call', choice: 0, index, id: null, name: null, arguments: piece });
        }
      }
      for (const piece of randomSplit(modelText, random)) encoder.encode({ type: 'text', choice: 0, text: piece });
      encoder.encode({ type: 'finish', choice: 0, stopReason: 'stop' });
      expect(JSON.parse(inner.args(0))).toEqual({ to: 'ada@example.com' });
      expect(JSON.parse(inner.args(1))).toEqual({ cc: ' grace@example.org' });
      expect(inner.text()).toContain('ada@example.com, grace@example.org, +44 20 7946 0958 — ünïcødé 😀');
      expect(inner.text()).toContain('IBAN [IBAN]. Done 😀');
      expect(inner.text().startsWith('Noted: ')).toBe(true);
      // Every text event the client saw is well-formed UTF-16: no lone surrogate from a split emoji.
      for (const event of inner.events) if (event.type === 'text') expect(event.text).not.toMatch(LONE_SURROGATE);
      // The finish comes last, after every held-back tail.
      expect(inner.events.at(-1)).toEqual({ type: 'finish', choice: 0, stopReason: 'stop' });
    }
  });

  test('a text tail held back is released before the tool call that follows it (order kept for Anthropic-style blocks)', async () => {
    const guard = guardFor({ input: { email: 'tokenize' } });
    await guard.inspectRequest(chatRequest({ messages: [{ role: 'user', content: [{ type: 'text', text: 'ada@example.com' }] }] }));
    const inner = new RecordingEncoder();
    const encoder = new GuardedStreamEncoder(inner, guard);
    encoder.encode({ type: 'text', choice: 0, text: 'Sending [PII1' });
    encoder.encode({ type: 'tool_call', choice: 0, index: 0, id: 'c0', name: 'send', arguments: '{}' });
    expect(inner.events.map((e) => e.type)).toEqual(['text', 'text', 'tool_call']);
    expect(inner.text()).toBe('Sending [PII1');
  });

  test('an output block: the clean text before it goes out, then the error frame; the encoder throws a GatewayFault with the client\'s 400', () => {
    const guard = guardFor({ output: { secret: 'block' } });
    const inner = new RecordingEncoder();
    const encoder = new GuardedStreamEncoder(inner, guard);
    const text = `${'fine words '.repeat(40)}sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD tail`;
    let fault: unknown = null;
    let frames = '';
    for (const piece of randomSplit(text, seeded(7))) {
      try {
        frames += encoder.encode({ type: 'text', choice: 0, text: piece });
      } catch (error) {
        fault = error;
        break;
      }
    }
    if (!fault) {
      try {
        encoder.encode({ type: 'finish', choice: 0, stopReason: 'stop' });
      } catch (error) {
        fault = error;
      }
    }
    expect(fault).toBeInstanceOf(GatewayFault);
    expect((fault as GatewayFault).error).toMatchObject({ status: 400, code: 'content_policy_violation' });
    frames += encoder.error((fault as GatewayFault).error);
    expect(frames.endsWith('ERROR\n')).toBe(true);
    expect(inner.text()).toBe('fine words '.repeat(40));
    expect(frames).not.toContain('sk-proj');
  });
});
