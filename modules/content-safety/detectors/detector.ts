import type { FindingSeverity, FindingType } from '../finding.js';
import type { ScanText, Window } from './scan-text.js';

/** Receives one match: its span and, for graded heuristics, a severity. */
export type EmitFinding = (start: number, end: number, severity?: FindingSeverity) => void;

/**
 * One local detector: pattern matching with validation (checksums, ranges), never a model. Its `version` is
 * recorded in the transformation manifest, so a change in what a detector matches is visible in the evidence.
 */
export interface Detector {
  readonly type: FindingType;
  readonly version: string;
  detect(text: ScanText, emit: EmitFinding): void;
}

/**
 * Runs a global regex over `text`, or over each window of it (a slice: a search never runs past its window's end),
 * calling back with each match and the offset of its slice. Each detector holds its own regex: lastIndex is state.
 */
export function eachMatch(pattern: RegExp, text: string, onMatch: (match: RegExpExecArray, offset: number) => void, windows?: readonly Window[]): void {
  if (!windows) return matchesIn(pattern, text, 0, onMatch);
  for (const [start, end] of windows) matchesIn(pattern, start === 0 && end === text.length ? text : text.slice(start, end), start, onMatch);
}

function matchesIn(pattern: RegExp, slice: string, offset: number, onMatch: (match: RegExpExecArray, offset: number) => void): void {
  pattern.lastIndex = 0;
  for (let match = pattern.exec(slice); match !== null; match = pattern.exec(slice)) {
    if (match[0].length === 0) { pattern.lastIndex++; continue; }
    onMatch(match, offset);
  }
}
