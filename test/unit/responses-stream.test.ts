import type { RelayedStreamEvent as StreamEvent } from '../../modules/canonical/chat-response.js';
import { GatewayError } from '../../modules/canonical/gateway-error.js';
import { parseResponsesRequest } from '../../modules/inference/formats/responses/responses-request.js';
import { ResponsesStreamEncoder } from '../../modules/inference/formats/responses/responses-stream.js';

/**
 * The Responses stream encoder as a state machine over canonical events: which semantic events it
 * writes, in which order, with which indexes, for the shapes providers actually produce (text, calls
 * one after another, parallel calls whose pieces interleave, an empty answer, a cut-short answer, a
 * failure after output started).
 */
const identity = { id: 'resp_abc', created: 1_700_000_000, model: 'alias' };
const usage = { input: 10, cachedInput: 4, cacheWrite: 0, output: 6, reasoning: 0 };

function run(events: StreamEvent[], end: 'finish' | GatewayError = 'finish'): Array<Record<string, any>> {
  const request = parseResponsesRequest({ model: 'alias', input: 'hi', stream: true, instructions: 'Be brief.' });
  const encoder = new ResponsesStreamEncoder(identity, request);
  let text = events.map((event) => encoder.encode(event)).join('');
  text += end === 'finish' ? encoder.finish(usage) : encoder.error(end);
  return text
    .split('\n\n')
    .filter((block) => block.length > 0)
    .map((block) => {
      const [eventLine, dataLine] = block.split('\n');
      const data = JSON.parse(dataLine.slice('data: '.length));
      expect(eventLine).toBe(`event: ${data.type}`);
      return data;
    });
}

const types = (frames: Array<Record<string, any>>) => frames.map((f) => f.type);
const text = (t: string): StreamEvent => ({ type: 'text', choice: 0, text: t });
const call = (index: number, id: string | null, name: string | null, args: string): StreamEvent => ({ type: 'tool_call', choice: 0, index, id, name, arguments: args });
const finish = (stopReason: 'stop' | 'length' | 'tool_calls'): StreamEvent => ({ type: 'finish', choice: 0, stopReason });

describe('ResponsesStreamEncoder', () => {
  test('text: created, in_progress, one message item with its part, deltas, the done events, completed with usage', () => {
    const frames = run([text(''), text('Hel'), text('lo'), finish('stop')]);
    expect(types(frames)).toEqual([
      'response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added',
      'response.output_text.delta', 'response.output_text.delta', 'response.output_text.done', 'response.content_part.done',
      'response.output_item.done', 'response.completed',
    ]);
    expect(frames.map((f) => f.sequence_number)).toEqual(frames.map((_, i) => i));
    expect(frames[0].response).toMatchObject({ id: 'resp_abc', status: 'in_progress', instructions: 'Be brief.', output: [], usage: null, store: false });
    expect(frames[2].item).toEqual({ type: 'message', id: 'msg_abc_0', status: 'in_progress', role: 'assistant', content: [] });
    expect(frames[6]).toMatchObject({ item_id: 'msg_abc_0', output_index: 0, content_index: 0, text: 'Hello' });
    expect(frames[8].item).toMatchObject({ status: 'completed', content: [{ type: 'output_text', text: 'Hello', annotations: [] }] });
    expect(frames[9].response).toMatchObject({
      status: 'completed',
      output: [{ type: 'message', id: 'msg_abc_0', content: [{ text: 'Hello' }] }],
      usage: { input_tokens: 10, input_tokens_details: { cached_tokens: 4 }, output_tokens: 6, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 16 },
    });
  });

  test('text then a call: the message item is closed before the call item opens', () => {
    const frames = run([text('Let me check.'), call(0, 'call_1', 'get_weather', '{"city":'), call(0, null, null, '"Paris"}'), finish('tool_calls')]);
    expect(types(frames).slice(2)).toEqual([
      'response.output_item.added', 'response.content_part.added', 'response.output_text.delta', 'response.output_text.done',
      'response.content_part.done', 'response.output_item.done', 'response.output_item.added', 'response.function_call_arguments.delta',
      'response.function_call_arguments.delta', 'response.function_call_arguments.done', 'response.output_item.done', 'response.completed',
    ]);
    const added = frames.filter((f) => f.type === 'response.output_item.added');
    expect(added[1]).toMatchObject({ output_index: 1, item: { type: 'function_call', id: 'fc_abc_1', call_id: 'call_1', name: 'get_weather', arguments: '', status: 'in_progress' } });
    expect(frames.find((f) => f.type === 'response.function_call_arguments.done')).toMatchObject({ item_id: 'fc_abc_1', output_index: 1, arguments: '{"city":"Paris"}' });
  });

  test('parallel calls whose pieces interleave: each piece lands in its own item; both close at the finish, in output order', () => {
    const frames = run([call(0, 'call_a', 'first', '{"a"'), call(1, 'call_b', 'second', '{"b"'), call(0, null, null, ':1}'), call(1, null, null, ':2}'), finish('tool_calls')]);
    const deltas = frames.filter((f) => f.type === 'response.function_call_arguments.delta');
    expect(deltas.map((d) => [d.output_index, d.delta])).toEqual([[0, '{"a"'], [1, '{"b"'], [0, ':1}'], [1, ':2}']]);
    const done = frames.filter((f) => f.type === 'response.function_call_arguments.done');
    expect(done.map((d) => [d.output_index, d.arguments])).toEqual([[0, '{"a":1}'], [1, '{"b":2}']]);
    expect(frames[frames.length - 1].response.output.map((item: any) => [item.call_id, item.arguments, item.status])).toEqual([
      ['call_a', '{"a":1}', 'completed'],
      ['call_b', '{"b":2}', 'completed'],
    ]);
  });

  test('an answer without output still has its (empty) message item, as the buffered object does', () => {
    const frames = run([finish('stop')]);
    expect(types(frames)).toEqual([
      'response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added',
      'response.output_text.done', 'response.content_part.done', 'response.output_item.done', 'response.completed',
    ]);
    expect(frames[frames.length - 1].response.output).toEqual([expect.objectContaining({ type: 'message', content: [expect.objectContaining({ text: '' })] })]);
  });

  test('cut short by the output cap: items incomplete, and response.incomplete with the reason', () => {
    const frames = run([text('Hello'), finish('length')]);
    expect(frames.find((f) => f.type === 'response.output_item.done')!.item.status).toBe('incomplete');
    expect(frames[frames.length - 1]).toMatchObject({ type: 'response.incomplete', response: { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } } });
  });

  test('a failure after output started: an error event, then response.failed carrying the error; no completed', () => {
    const frames = run([text('Hel')], new GatewayError(502, 'upstream_error', 'The provider failed after the stream started.'));
    expect(types(frames).slice(-2)).toEqual(['error', 'response.failed']);
    expect(frames[frames.length - 2]).toMatchObject({ code: 'upstream_error', message: 'The provider failed after the stream started.', param: null });
    expect(frames[frames.length - 1].response).toMatchObject({ status: 'failed', error: { code: 'upstream_error' }, usage: null });
    expect(frames.map((f) => f.sequence_number)).toEqual(frames.map((_, i) => i));
  });
});
