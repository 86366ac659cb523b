import { useRef, useState } from 'preact/hooks';
import { api } from '../api.js';
import { Button, ErrorNotice, Facts, Field, Link, PageHeader, Section } from '../components/ui.js';
import { count, usd } from '../format.js';
import { readWholeList } from '../paged-list.js';
import { useResource } from '../resource.js';
import { sseData } from '../sse.js';
import type { Alias } from '../types.js';

interface Turn { role: 'user' | 'assistant'; content: string }
interface Outcome { requestId: string | null; inputTokens: number | null; outputTokens: number | null; costUsd: string | null; status: 'streaming' | 'done' | 'failed' | 'stopped' }

/**
 * Chat with an alias through the data plane (/v1/chat/completions, streamed), as a client would: with an API
 * key the user pastes. The key lives in this component's memory only — never in storage, never sent to the
 * admin API — and is gone when the page is left. The cost comes from the request's history once it is billed.
 */
export function PlaygroundPage() {
  const aliases = useResource((signal) => readWholeList<Alias>('/admin/v1/aliases', signal), 'aliases');
  const [apiKey, setApiKey] = useState('');
  const [alias, setAlias] = useState('');
  const [prompt, setPrompt] = useState('');
  const [turns, setTurns] = useState<Turn[]>([]);
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const [error, setError] = useState<unknown>(null);
  const running = useRef<AbortController | null>(null);
  const published = (aliases.data ?? []).filter((a) => a.status === 'published');
  const chosen = alias || published[0]?.name || '';

  const send = async (event: Event) => {
    event.preventDefault();
    if (!prompt.trim() || !chosen || !apiKey) return;
    const history: Turn[] = [...turns, { role: 'user', content: prompt }];
    setTurns([...history, { role: 'assistant', content: '' }]);
    setPrompt('');
    setError(null);
    const controller = new AbortController();
    running.current = controller;
    const result: Outcome = { requestId: null, inputTokens: null, outputTokens: null, costUsd: null, status: 'streaming' };
    setOutcome({ ...result });
    try {
      const response = await fetch('/v1/chat/completions', {
        method: 'POST',
        credentials: 'omit',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', accept: 'text/event-stream' },
        body: JSON.stringify({ model: chosen, messages: history, stream: true, stream_options: { include_usage: true } }),
        signal: controller.signal,
      });
      result.requestId = response.headers.get('x-request-id');
      if (!response.ok || !response.body) {
        const body = (await response.json().catch(() => null)) as { error?: { message?: string; code?: string } } | null;
        throw new Error(`${response.status}${body?.error?.code ? ` ${body.error.code}` : ''}: ${body?.error?.message ?? response.statusText}`);
      }
      let answer = '';
      for await (const data of sseData(response.body, controller.signal)) {
        if (data === '[DONE]') break;
        const chunk = JSON.parse(data) as { choices?: Array<{ delta?: { content?: string } }>; usage?: { prompt_tokens?: number; completion_tokens?: number }; error?: { message?: string } };
        if (chunk.error) throw new Error(chunk.error.message ?? 'The stream ended with an error.');
        const delta = chunk.choices?.[0]?.delta?.content;
        if (delta) {
          answer += delta;
          setTurns([...history, { role: 'assistant', content: answer }]);
        }
        if (chunk.usage) {
          result.inputTokens = chunk.usage.prompt_tokens ?? null;
          result.outputTokens = chunk.usage.completion_tokens ?? null;
        }
      }
      result.status = controller.signal.aborted ? 'stopped' : 'done';
      setOutcome({ ...result });
      if (result.requestId) result.costUsd = await billedCost(result.requestId);
      setOutcome({ ...result });
    } catch (failure) {
      result.status = controller.signal.aborted ? 'stopped' : 'failed';
      setOutcome({ ...result });
      if (!controller.signal.aborted) setError(failure);
      setTurns(history);
    } finally {
      running.current = null;
    }
  };

  return (
    <>
      <PageHeader title="Playground" />
      <div class="grid-side">
        <Section title="Settings">
          <form class="stack" onSubmit={(e) => e.preventDefault()} aria-label="Playground settings">
            <Field id="playground-key" label="API key" hint="Held in this page's memory only; issue one on the Access page.">
              <input id="playground-key" type="password" autoComplete="off" spellcheck={false} class="mono" value={apiKey} aria-describedby="playground-key-hint"
                onInput={(e) => setApiKey(e.currentTarget.value)} />
            </Field>
            <Field id="playground-alias" label="Alias">
              <select id="playground-alias" value={chosen} onChange={(e) => setAlias(e.currentTarget.value)}>
                {published.map((a) => <option key={a.name} value={a.name}>{a.name}</option>)}
              </select>
            </Field>
            <Button variant="secondary" onClick={() => { setTurns([]); setOutcome(null); setError(null); }}>New conversation</Button>
          </form>
          {outcome ? (
            <div class="outcome" aria-live="polite" data-testid="playground-outcome">
              <h3>Last request</h3>
              <Facts rows={[
                ['Request id', outcome.requestId ? <Link to={`/requests/${encodeURIComponent(outcome.requestId)}`} class="mono">{outcome.requestId}</Link> : '—'],
                ['Status', outcome.status],
                ['Tokens in / out', `${count(outcome.inputTokens)} / ${count(outcome.outputTokens)}`],
                ['Cost', outcome.costUsd === null ? (outcome.status === 'done' ? 'being billed…' : '—') : usd(outcome.costUsd, 8)],
              ]} />
            </div>
          ) : null}
        </Section>
        <Section title="Conversation">
          <ol class="chat" aria-live="polite" aria-label="Conversation">
            {turns.length === 0 ? <li class="muted">Send a message to start.</li> : turns.map((turn, index) => (
              <li key={index} class={`turn turn-${turn.role}`}>
                <span class="turn-role">{turn.role === 'user' ? 'You' : chosen}</span>
                <p class="turn-text">{turn.content || '…'}</p>
              </li>
            ))}
          </ol>
          <ErrorNotice error={error} />
          <form class="composer" onSubmit={send}>
            <label for="playground-prompt" class="visually-hidden">Message</label>
            <textarea id="playground-prompt" rows={3} placeholder="Ask something…" value={prompt} onInput={(e) => setPrompt(e.currentTarget.value)}
              onKeyDown={(e) => { if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) (e.currentTarget.form as HTMLFormElement).requestSubmit(); }} />
            <div class="form-actions">
              {running.current ? <Button variant="secondary" onClick={() => running.current?.abort()}>Stop</Button> : null}
              <Button type="submit" disabled={!apiKey || !chosen || !prompt.trim() || outcome?.status === 'streaming'}>Send</Button>
            </div>
          </form>
        </Section>
      </div>
    </>
  );
}

/** The request's billed cost from its history; the ledger may lag the stream's end by a moment. */
async function billedCost(requestId: string): Promise<string | null> {
  for (let attempt = 0; attempt < 10; attempt++) {
    try {
      const story = await api<{ billing: { ledgerRows: number; costUsd: string } }>(`/admin/v1/requests/${encodeURIComponent(requestId)}`);
      if (story.billing.ledgerRows > 0) return story.billing.costUsd;
    } catch {
      // Not recorded yet (404) or not readable for this role: try again shortly, then give up quietly.
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
  return null;
}
