import type { AppliedContentPolicy, ContentPolicyDefinition, PolicyModeration, PolicyWebhook, RemoteCheckDirection, TransformationManifest } from '../../events/index.js';
import type { ChatRequest, ChatResponse } from '../canonical/index.js';
import { type CompiledContentPolicy, type CompiledRules, compilePolicy } from './compiled-policy.js';
import { ContentPolicyViolation, UnresolvedPlaceholders } from './content-policy-violation.js';
import type { ContentDirection } from './finding.js';
import { FindingCounts } from './finding-counts.js';
import { OutputStream } from './output-stream.js';
import { PLACEHOLDER_INSTRUCTION, PLACEHOLDER_PREFIX } from './placeholder.js';
import type { PlaceholderKeys } from './placeholder-keys.js';
import { type RecoveryEncoding, recoverText } from './recovery.js';
import { type ModerationCaller, runModerationChecks } from './moderation-check.js';
import { RemoteCheckBlock, type RemoteCheckResources, runWebhookChecks } from './remote-checks.js';
import { rewriteJsonText, rewriteRequestContent } from './request-content.js';
import { RequestTokenVault } from './request-token-vault.js';
import { applyInputPolicy, applyOutputPolicy } from './text-policy.js';
import type { SessionTokenVault } from './session-token-vault.js';
import type { TokenVault } from './token-vault.js';
import { contentDigest } from './transformation.js';

/** The content policy in force for one request, as the routing snapshot captured it. */
export interface RequestContentPolicy {
  applied: AppliedContentPolicy;
  definition: ContentPolicyDefinition;
  /** The webhooks of the policies in force, each with its own policy (they are not combined: each is asked). */
  webhooks?: readonly PolicyWebhook[];
  /** The moderation checks of the policies in force, each with its own policy. */
  moderations?: readonly PolicyModeration[];
}

/** Where a request's placeholders are bound: its tenant, and its own id or the client's session. */
export interface GuardScope {
  tenantId: string;
  requestId: string;
  /** The client's `x-session-id`; session-scoped tokenization without one falls back to the request's own scope. */
  sessionId: string | null;
}

/** What a guard needs from the process: the placeholder keys, and the session vault when Redis holds sessions. */
export interface GuardResources {
  keys: PlaceholderKeys;
  /** Opens the session vault of (tenant, session); null when sessions cannot be kept (no Redis, no operator key). */
  sessionVault: ((tenantId: string, sessionId: string) => SessionTokenVault) | null;
  /** Where remote checks report, and how they resolve host names; absent: they run without metrics. */
  remote?: RemoteCheckResources;
  /** Calls a moderation alias for this request (a billed request of its own); absent: moderation checks are not run. */
  moderation?: ModerationCaller;
}

/** One text channel of a streamed answer: text goes in as it comes, what may be released comes out. */
export interface TextChannel {
  push(text: string): string;
  /** The rest, when the channel can grow no more. */
  end(): string;
}

/** What a streamed answer's encoder asks of the request's content policy. */
export interface StreamContentGuard {
  channel(kind: 'text' | 'reasoning' | 'tool_arguments'): TextChannel;
}

// Compiled once per policy version: the snapshot hands out the same definition object for as long as it lasts.
const compiled = new WeakMap<ContentPolicyDefinition, CompiledContentPolicy>();
const embeddingRules = new WeakMap<CompiledRules, CompiledRules>();

function compiledFor(definition: ContentPolicyDefinition): CompiledContentPolicy {
  let known = compiled.get(definition);
  if (!known) {
    known = compilePolicy(definition);
    compiled.set(definition, known);
  }
  return known;
}

/**
 * One request's content policy at work, from the input checks before dispatch to the output checks and placeholder
 * recovery of its answer (DESIGN §6): owns the request's token vault and the counts its manifests and metrics report.
 * Input: every place content lives in the canonical request (request-content.ts) is scanned; `block` throws a
 * ContentPolicyViolation (nothing is sent); mask and tokenize rewrite the text. Output: buffered answers are checked
 * whole, streamed ones per channel through OutputStream's bounded window; placeholders are recovered exactly.
 */
export class ContentGuard implements StreamContentGuard {
  readonly inputCounts = new FindingCounts();
  readonly outputCounts = new FindingCounts();
  private readonly policy: CompiledContentPolicy;
  private readonly vault: TokenVault | null;
  private readonly session: SessionTokenVault | null;
  private readonly channels: OutputStream[] = [];
  private inputDigest: string | null = null;
  private outputTexts: string[] | null = null;
  private created = 0;
  private resolved = 0;
  private unresolved = 0;
  /** The answer's texts as the output checks left them (before recovery): what an output webhook is sent. */
  private answerTexts: string[] | null = null;

  constructor(
    readonly contentPolicy: RequestContentPolicy,
    private readonly scope: GuardScope,
    private readonly resources: GuardResources,
  ) {
    this.policy = compiledFor(contentPolicy.definition);
    const tokenizes = this.policy.input.rules.some((rule) => rule.action === 'tokenize');
    const sessionScoped = tokenizes && this.policy.tokenScope === 'session' && scope.sessionId !== null && resources.sessionVault !== null;
    this.session = sessionScoped ? resources.sessionVault!(scope.tenantId, scope.sessionId!) : null;
    this.vault = this.session ?? (tokenizes ? new RequestTokenVault(resources.keys, scope.tenantId, scope.requestId) : null);
  }

  /** The policy ids, joined: the `policy` label of the findings metric. */
  get policyLabel(): string {
    return this.contentPolicy.applied.sources.map((source) => source.policyId).filter((id, index, ids) => ids.indexOf(id) === index).join('+');
  }

  /** Whether a buffered answer with an unresolved placeholder fails (`reject-buffered`). */
  get rejectsUnresolved(): boolean {
    return this.policy.unresolvedTokenPolicy === 'reject-buffered' && this.vault !== null;
  }

  /**
   * The request as it may be sent to a provider: findings masked or tokenized, and the placeholder instruction added
   * when the policy asks and something was tokenized. Throws ContentPolicyViolation on a `block` finding (its type,
   * never its value). A session-scoped vault first loads the placeholders the history refers to, and stores the new
   * ones before the request goes out (another node may serve the next turn).
   */
  async inspectRequest(request: ChatRequest): Promise<ChatRequest> {
    if (this.session) await this.session.loadReferenced(requestTexts(request));
    const rules = this.policy.input;
    const block: { type: string | null } = { type: null };
    const guarded = rules.rules.length === 0 ? request : rewriteRequestContent(request, (text) => {
      if (block.type !== null) return text;
      const result = applyInputPolicy(text, { rules, vault: this.vault ?? undefined, counts: this.inputCounts });
      if (result.blocked) block.type = result.blocked;
      return result.text;
    });
    if (block.type !== null) throw this.violation('input', block.type);
    this.created = this.vault?.size ?? 0;
    let sent = guarded;
    if (guarded !== request) {
      if (this.created > 0 && this.policy.placeholderInstruction) sent = withInstruction(guarded);
      this.inputDigest = contentDigest(requestTexts(sent).join('\u0000'));
    }
    // Remote checks see what would leave the gateway (masked, tokenized), and only once no local rule blocked it.
    await this.checkRemotely('input', requestTexts(sent));
    if (this.session) await this.session.persist();
    return sent;
  }

  /**
   * The remote checks of a direction (the policies' webhooks) on texts as the local checks left them: throws a
   * RemoteCheckBlock on a block, RemoteCheckUnavailable when a fail-closed check gave no verdict. Embeddings call it
   * with their inspected inputs; chat requests run it inside inspectRequest.
   */
  async checkRemotely(direction: RemoteCheckDirection, texts: readonly string[]): Promise<void> {
    const { webhooks, moderations } = this.contentPolicy;
    const counts = direction === 'input' ? this.inputCounts : this.outputCounts;
    const subject = { requestId: this.scope.requestId, tenantId: this.scope.tenantId };
    const hooked = webhooks !== undefined && webhooks.length > 0;
    const moderated = moderations !== undefined && moderations.length > 0 && this.resources.moderation !== undefined;
    if (!moderated) {
      if (hooked) await runWebhookChecks(webhooks, direction, texts, subject, counts, this.resources.remote);
      return;
    }
    // Both kinds at once; any block wins over a check that gave no verdict, whichever kind it came from.
    const outcomes = await Promise.allSettled([
      hooked ? runWebhookChecks(webhooks, direction, texts, subject, counts, this.resources.remote) : Promise.resolve(),
      runModerationChecks(moderations, direction, texts, subject, counts, this.resources.moderation, this.resources.remote),
    ]);
    const failures = outcomes.filter((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected').map((outcome) => outcome.reason as unknown);
    if (failures.length > 0) throw failures.find((failure) => failure instanceof RemoteCheckBlock) ?? failures[0];
  }

  /**
   * The output remote checks of a buffered answer, after inspectAnswer: they see the answer as the local output
   * checks left it, with placeholders still in place (never the values they stand for). Streams are not sent:
   * an answer already on its way cannot wait for an operator's verdict (docs/content-safety-remote.md).
   */
  async checkAnswerRemotely(): Promise<void> {
    const texts = this.answerTexts;
    this.answerTexts = null;
    if (texts) await this.checkRemotely('output', texts);
  }

  /** Whether the policies in force ask a webhook about answers (the output checks keep the texts for it). */
  private get checksAnswersRemotely(): boolean {
    return (this.contentPolicy.webhooks?.some((check) => check.webhook.directions.includes('output')) ?? false)
      || (this.resources.moderation !== undefined && (this.contentPolicy.moderations?.some((check) => check.moderation.directions.includes('output')) ?? false));
  }

  /**
   * Texts (embeddings inputs) as they may be sent: `tokenize` acts as `mask` there, since nothing comes back to
   * recover and per-request placeholders would make the same text embed differently each time.
   */
  inspectTexts(texts: string[]): string[] {
    const rules = rulesForEmbeddings(this.policy.input);
    if (rules.rules.length === 0) return texts;
    let changed = false;
    const out = texts.map((text) => {
      const result = applyInputPolicy(text, { rules, counts: this.inputCounts });
      if (result.blocked) throw this.violation('input', result.blocked);
      if (result.text !== text) changed = true;
      return result.text;
    });
    if (changed) this.inputDigest = contentDigest(out.join('\u0000'));
    return changed ? out : texts;
  }

  /**
   * A buffered answer as the client may receive it: the model's own text checked (mask, log, block) with
   * placeholders left out of the scan, then placeholders recovered — in text, and in tool-call arguments as JSON
   * string values (escaped as JSON needs). Reasoning is checked but its placeholders stay: it is signed by its
   * provider and goes back in the next turn as it was. Throws ContentPolicyViolation on a block, and
   * UnresolvedPlaceholders under `reject-buffered` when a placeholder could not be recovered.
   */
  inspectAnswer(response: ChatResponse): ChatResponse {
    if (this.checksAnswersRemotely) this.answerTexts = [];
    const choices = response.choices.map((choice) => {
      const text = this.outputText(choice.text, 'text');
      const toolCalls = choice.toolCalls.map((call) => {
        // String values one by one (a finding never spans two), serialised again by the walk: no escaping needed.
        const args = rewriteJsonText(call.arguments, (value) => this.outputText(value, 'text'));
        return args === call.arguments ? call : { ...call, arguments: args };
      });
      const reasoning = choice.reasoning.map((part) => {
        if (part.type !== 'thinking') return part;
        const checked = this.outputText(part.text, null);
        return checked === part.text ? part : { ...part, text: checked };
      });
      return { ...choice, text, toolCalls, reasoning };
    });
    if (this.rejectsUnresolved && this.unresolved > 0) throw new UnresolvedPlaceholders(this.unresolved);
    this.outputTexts = choices.flatMap((choice) => [choice.text, ...choice.toolCalls.map((call) => call.arguments)]);
    return { ...response, choices };
  }

  /** A streamed channel: output checks over a bounded window, then recovery (not for reasoning: see inspectAnswer). */
  channel(kind: 'text' | 'reasoning' | 'tool_arguments'): TextChannel {
    const vault = kind === 'reasoning' || !this.vault ? undefined : this.vault;
    if (!vault && this.policy.output.rules.length === 0) return PASS_THROUGH;
    // Streamed tool arguments are raw JSON text: a recovered value is escaped as a JSON string needs.
    const stream = new OutputStream({ rules: this.policy.output, vault, counts: this.outputCounts, encoding: kind === 'tool_arguments' ? 'json' : 'text' });
    this.channels.push(stream);
    return {
      push: (text) => this.released(stream.push(text)),
      end: () => this.released(stream.end()),
    };
  }

  /** RequestAdmitted's (and a block's RequestRejected's) record of the policy: ids, versions, what the input checks did. */
  admitted(): AppliedContentPolicy {
    const placeholders = this.vault ? { placeholders: { created: this.created } } : {};
    return { sources: this.contentPolicy.applied.sources, manifest: { detectors: this.policy.detectorVersions, findings: this.inputCounts.lines(), digest: this.inputDigest, ...placeholders } };
  }

  /** RequestCompleted's record of what the output checks and recovery did. */
  completed(): TransformationManifest {
    for (const stream of this.channels.splice(0)) {
      this.resolved += stream.resolved;
      this.unresolved += stream.unresolved;
    }
    const placeholders = this.vault ? { placeholders: { resolved: this.resolved, unresolved: this.unresolved } } : {};
    const digest = this.outputTexts ? contentDigest(this.outputTexts.join('\u0000')) : null;
    return { detectors: this.policy.detectorVersions, findings: this.outputCounts.lines(), digest, ...placeholders };
  }

  /** Forgets the request's mappings (request scope); a session's stay in Redis until their TTL. */
  dispose(): void {
    this.vault?.clear();
  }

  /**
   * One whole output text: checked, then recovered (`encoding`), or only checked (null: reasoning keeps its
   * placeholders). What an output webhook is sent is the checked text, before recovery.
   */
  private outputText(text: string, encoding: RecoveryEncoding | null): string {
    if (text.length === 0) return text;
    let checked = text;
    if (this.policy.output.rules.length > 0) {
      const result = applyOutputPolicy(text, { rules: this.policy.output, counts: this.outputCounts });
      if (result.blocked) throw this.violation('output', result.blocked);
      checked = result.text;
    }
    if (encoding === null) return checked;
    this.answerTexts?.push(checked);
    if (!this.vault || !checked.includes(PLACEHOLDER_PREFIX)) return checked;
    const recovered = recoverText(checked, this.vault, encoding);
    this.resolved += recovered.resolved;
    this.unresolved += recovered.unresolved;
    return recovered.text;
  }

  private released(release: { text: string; blocked: string | null }): string {
    if (release.blocked) throw this.violation('output', release.blocked, release.text);
    return release.text;
  }

  private violation(direction: ContentDirection, type: string, released = ''): ContentPolicyViolation {
    return new ContentPolicyViolation(direction, type, this.contentPolicy.applied.sources.map((source) => ({ policyId: source.policyId, version: source.version })), released);
  }
}

const PASS_THROUGH: TextChannel = Object.freeze({ push: (text: string) => text, end: () => '' });

/** Every piece of content of a request, in a stable order (for the session vault's lookups and the digest). */
function requestTexts(request: ChatRequest): string[] {
  const texts: string[] = [];
  rewriteRequestContent(request, (text) => {
    texts.push(text);
    return text;
  });
  return texts;
}

function withInstruction(request: ChatRequest): ChatRequest {
  const instruction = { role: 'system' as const, content: [{ type: 'text' as const, text: PLACEHOLDER_INSTRUCTION }] };
  const first = request.messages.findIndex((message) => message.role !== 'system');
  const messages = first === -1 ? [...request.messages, instruction] : [...request.messages.slice(0, first), instruction, ...request.messages.slice(first)];
  return { ...request, messages };
}

function rulesForEmbeddings(input: CompiledRules): CompiledRules {
  let known = embeddingRules.get(input);
  if (!known) {
    known = { rules: input.rules.map((rule) => (rule.action === 'tokenize' ? { detector: rule.detector, action: 'mask' as const } : rule)) };
    embeddingRules.set(input, known);
  }
  return known;
}
