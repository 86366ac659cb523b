import type { CompiledRules } from './compiled-policy.js';
import type { FindingType } from './finding.js';
import { FindingCounts } from './finding-counts.js';
import { PlaceholderRecoveryStream } from './placeholder-recovery-stream.js';
import { MAX_PLACEHOLDER_LENGTH, placeholderSpans } from './placeholder.js';
import type { RecoveryEncoding } from './recovery.js';
import { scan } from './scanner.js';
import type { TokenVault } from './token-vault.js';
import { transform } from './transformation.js';

/**
 * How many characters at the end of a streamed text stay unscanned-final when output checks apply: a finding of at
 * most this length is always seen whole, wherever the chunks split it. A channel holds back between OUTPUT_OVERLAP
 * and 2 × OUTPUT_OVERLAP characters (it scans once per OUTPUT_OVERLAP new characters), plus the recovery holdback.
 */
export const OUTPUT_OVERLAP = 128;

/** How many overlaps a channel's window may reach while one finding keeps growing before it is released clipped. */
const MAX_WINDOW_OVERLAPS = 8;

export interface StreamRelease {
  text: string;
  /** A `block` finding in the output: release `text`, then end the stream with an error naming this type. */
  blocked: FindingType | null;
}

export interface OutputStreamOptions {
  rules: CompiledRules;
  vault?: TokenVault;
  counts?: FindingCounts;
  /** Overrides OUTPUT_OVERLAP (at least MAX_PLACEHOLDER_LENGTH). */
  overlap?: number;
  /** `json` for tool-call argument channels: recovered values are escaped for a JSON string. */
  encoding?: RecoveryEncoding;
}

/**
 * One streamed output channel (a choice's text, one tool call's arguments): output checks over a bounded window
 * with overlap, then placeholder recovery, in one holdback. Without output rules it is recovery alone (holdback at
 * most one placeholder); without a vault, checks alone. After a block it releases nothing more.
 */
export class OutputStream {
  readonly counts: FindingCounts;
  private readonly recovery: PlaceholderRecoveryStream | null;
  private readonly overlap: number;
  private window = '';
  private carry = '';
  private stopped = false;

  constructor(private readonly options: OutputStreamOptions) {
    this.counts = options.counts ?? new FindingCounts();
    this.recovery = options.vault ? new PlaceholderRecoveryStream(options.vault, options.encoding) : null;
    this.overlap = Math.max(options.overlap ?? OUTPUT_OVERLAP, MAX_PLACEHOLDER_LENGTH);
  }

  get resolved(): number {
    return this.recovery?.resolved ?? 0;
  }

  get unresolved(): number {
    return this.recovery?.unresolved ?? 0;
  }

  push(chunk: string): StreamRelease {
    if (this.stopped) return { text: '', blocked: null };
    if (this.options.rules.rules.length === 0) return { text: this.recover(chunk), blocked: null };
    this.window += chunk;
    if (this.window.length < 2 * this.overlap) return { text: '', blocked: null };
    return this.check(false);
  }

  end(): StreamRelease {
    if (this.stopped) return { text: '', blocked: null };
    const checked = this.options.rules.rules.length === 0 ? { text: '', blocked: null } : this.check(true);
    if (checked.blocked) return checked;
    return { text: checked.text + (this.recovery ? this.recovery.end() : ''), blocked: null };
  }

  private check(final: boolean): StreamRelease {
    // A finding released in parts (below) has its head carried: scanned again, never released, so that the
    // detector recognises its continuation in the new text, which is then dropped (its marker was written once).
    const carried = this.carry.length;
    const all = scan(this.carry + this.window, this.options.rules, { protectPlaceholders: true });
    const continuing = carried > 0 ? all.find((finding) => finding.start < carried && finding.end > carried) : undefined;
    let text = this.window;
    if (continuing) {
      const rest = continuing.end - carried;
      if (!final && rest > text.length - this.overlap) {
        // Still growing: drop what is settled of it, keep the tail.
        this.window = text.slice(safeCut(text, text.length - this.overlap));
        return { text: '', blocked: null };
      }
      text = text.slice(rest);
    }
    this.carry = '';
    const shift = carried + (this.window.length - text.length);
    const findings = all.filter((finding) => finding.start >= shift).map((finding) => ({ ...finding, start: finding.start - shift, end: finding.end - shift }));
    let cut = final ? text.length : text.length - this.overlap;
    // A finding that keeps growing past MAX_WINDOW_OVERLAPS windows (a huge key block) is released in parts: its
    // first part masked, the rest dropped as the detector keeps recognising it.
    const forced = !final && text.length > MAX_WINDOW_OVERLAPS * this.overlap;
    if (!final) {
      // Nothing that may still grow is released: a finding reaching into the tail, a placeholder across the cut.
      if (!forced) for (const finding of findings) if (finding.end > cut && finding.start < cut) cut = Math.min(cut, finding.start);
      for (const [start, end] of placeholderSpans(text)) if (start < cut && end > cut) cut = start;
      cut = safeCut(text, cut);
    }
    const settled = forced
      ? findings.filter((finding) => finding.start < cut).map((finding) => (finding.end > cut ? { ...finding, end: cut } : finding))
      : findings.filter((finding) => finding.end <= cut);
    const blocking = settled.find((finding) => finding.action === 'block');
    if (blocking) {
      // The clean text before the block may go; nothing at or after it does.
      const before = transform(text.slice(0, blocking.start), settled.filter((finding) => finding.end <= blocking.start), { direction: 'output', counts: this.counts });
      this.counts.add(blocking.type, 'output', 'block');
      this.stopped = true;
      this.window = '';
      return { text: this.recover(before.text) + (this.recovery ? this.recovery.end() : ''), blocked: blocking.type };
    }
    const straddling = forced ? findings.find((finding) => finding.start < cut && finding.end > cut) : undefined;
    if (straddling) this.carry = text.slice(straddling.start, Math.min(cut, straddling.start + this.overlap));
    const released = transform(text.slice(0, cut), settled, { direction: 'output', counts: this.counts });
    this.window = text.slice(cut);
    return { text: this.recover(released.text), blocked: null };
  }

  private recover(text: string): string {
    return this.recovery ? this.recovery.push(text) : text;
  }
}

/** `cut`, moved back one unit when it would separate a surrogate pair. */
function safeCut(text: string, cut: number): number {
  const before = text.charCodeAt(cut - 1);
  return cut > 0 && before >= 0xd800 && before <= 0xdbff ? cut - 1 : cut;
}
