import type { ChatRequest, DocumentPart } from './chat-request.js';
import { GatewayError } from './gateway-error.js';

/**
 * What kind of document a part is, which is what provider formats differ on: `pdf` (base64
 * application/pdf), `text` (a text source, or base64 text/plain), `file` (base64 of any other media type:
 * CSV, HTML, Markdown, Word…), `url`, `content` (Anthropic's custom content) and `file_id` (OpenAI Files).
 */
export type DocumentKind = 'pdf' | 'text' | 'file' | 'url' | 'content' | 'file_id';

export function documentKind(part: DocumentPart): DocumentKind {
  const source = part.source;
  switch (source.type) {
    case 'base64':
      if (source.mediaType === 'application/pdf') return 'pdf';
      return source.mediaType === 'text/plain' ? 'text' : 'file';
    case 'text':
      return 'text';
    default:
      return source.type;
  }
}

/** Every document of the request, in order. */
export function documentsOf(request: Pick<ChatRequest, 'messages'>): DocumentPart[] {
  return request.messages.flatMap((m) => m.content.filter((p): p is DocumentPart => p.type === 'document'));
}

/**
 * Strict standard base64 (RFC 4648 §4, padded, no whitespace or line breaks): what every provider accepts.
 * A loop over the characters, not a regular expression: a grouped repetition took over a second on 4 MiB of
 * text, on the event loop; this takes a few milliseconds.
 */
export function isBase64(data: string): boolean {
  const length = data.length;
  if (length === 0 || length % 4 !== 0) return false;
  const padding = data.charCodeAt(length - 1) === EQUALS ? (data.charCodeAt(length - 2) === EQUALS ? 2 : 1) : 0;
  for (let i = 0; i < length - padding; i++) {
    const c = data.charCodeAt(i);
    const alphabet = (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 43 || c === 47;
    if (!alphabet) return false;
  }
  return true;
}

const EQUALS = 61;

/** A media type as `type/subtype` (parameters such as `;charset=` are not part of it here). */
export const MEDIA_TYPE = /^[a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9][a-z0-9!#$&^_.+-]*$/i;

/** The document's size as the provider reads it: decoded bytes of base64, UTF-8 bytes of text; 0 for references. */
export function documentBytes(part: DocumentPart): number {
  const source = part.source;
  switch (source.type) {
    case 'base64': {
      const padding = source.data.endsWith('==') ? 2 : source.data.endsWith('=') ? 1 : 0;
      return (source.data.length / 4) * 3 - padding;
    }
    case 'text':
      return Buffer.byteLength(source.text, 'utf8');
    case 'content':
      return source.texts.reduce((sum, text) => sum + Buffer.byteLength(text, 'utf8'), 0);
    default:
      return 0;
  }
}

/** The text of a text-kind document (a text source, or base64 text/plain decoded as UTF-8). */
export function documentText(part: DocumentPart): string | null {
  const source = part.source;
  if (source.type === 'text') return source.text;
  if (source.type === 'base64' && source.mediaType === 'text/plain') return Buffer.from(source.data, 'base64').toString('utf8');
  return null;
}

/** The per-document and per-request bounds on document content (decoded bytes). */
export interface DocumentLimits {
  maxDocumentBytes: number;
  maxRequestDocumentBytes: number;
}

/**
 * 2 MiB a document, 3 MiB a request. The gateway's 4 MiB body limit holds about 3 MiB of decoded base64
 * at most, so the request total is what the body allows; the per-document bound keeps one attachment
 * from taking all of it. Both may be lowered (or raised, up to what the body limit admits).
 */
export const DEFAULT_DOCUMENT_LIMITS: DocumentLimits = Object.freeze({ maxDocumentBytes: 2 * 1024 * 1024, maxRequestDocumentBytes: 3 * 1024 * 1024 });

/**
 * Refuses a request whose documents are too large, before admission: 413 request_too_large naming the
 * document (where the client put it) or the request total, so nothing is reserved or sent upstream.
 */
export function checkDocumentLimits(request: Pick<ChatRequest, 'messages'>, limits: DocumentLimits): void {
  let total = 0;
  for (const part of documentsOf(request)) {
    const bytes = documentBytes(part);
    if (bytes > limits.maxDocumentBytes) {
      throw new GatewayError(
        413, 'request_too_large',
        `The document at ${part.at} is ${bytes} bytes (decoded); the most one document may have is ${limits.maxDocumentBytes} bytes.`,
        part.at, {}, { limit: 'document', bytes, max_bytes: limits.maxDocumentBytes },
      );
    }
    total += bytes;
  }
  if (total > limits.maxRequestDocumentBytes) {
    throw new GatewayError(
      413, 'request_too_large',
      `The request's documents are ${total} bytes (decoded) together; the most a request may carry is ${limits.maxRequestDocumentBytes} bytes.`,
      'messages', {}, { limit: 'request_documents', bytes: total, max_bytes: limits.maxRequestDocumentBytes },
    );
  }
}

/**
 * Tokens one PDF page is counted as. Anthropic documents 1,500–3,000 text tokens a page plus the page's
 * image; OpenAI also sends text and a page image: 4,000 is at the top of that range, so admission and the
 * context-window check err towards reserving too much rather than too little.
 */
export const TOKENS_PER_PDF_PAGE = 4_000;
/**
 * When no page object is visible (PDF 1.5 object streams compress them), one page is assumed per this many
 * bytes: dense text pages compress to a few KiB, so this counts more pages than most PDFs have.
 */
export const PDF_BYTES_PER_ASSUMED_PAGE = 50 * 1024;
/** A URL or a file id is not fetched: the gateway cannot see its size and counts it as this many tokens. */
export const TOKENS_PER_REFERENCED_DOCUMENT = TOKENS_PER_PDF_PAGE;

/**
 * Pages of a PDF: the page objects (`/Type /Page`, not `/Pages`) in its bytes, or, when none is visible,
 * one page per PDF_BYTES_PER_ASSUMED_PAGE bytes; at least one.
 */
export function pdfPages(base64: string): number {
  const bytes = Buffer.from(base64, 'base64');
  const visible = bytes.toString('latin1').match(/\/Type\s*\/Page(?![A-Za-z])/g)?.length ?? 0;
  return Math.max(1, visible > 0 ? visible : Math.ceil(bytes.length / PDF_BYTES_PER_ASSUMED_PAGE));
}

/**
 * The conservative input-token estimate of one document (documented in docs/providers.md): a PDF
 * TOKENS_PER_PDF_PAGE a page; text (a text source, text/plain, custom content) as the tokenizer counts it;
 * another file type one token per 2 bytes (text-like formats run 3–4 bytes a token); a URL or a file id
 * TOKENS_PER_REFERENCED_DOCUMENT. The title and context are text beside it.
 */
export function documentTokens(part: DocumentPart, count: (text: string) => number): number {
  const labels = count(part.title ?? '') + count(part.context ?? '');
  const source = part.source;
  switch (documentKind(part)) {
    case 'pdf':
      return labels + pdfPages((source as { data: string }).data) * TOKENS_PER_PDF_PAGE;
    case 'text':
      return labels + count(documentText(part)!);
    case 'content':
      return labels + (source as { texts: string[] }).texts.reduce((sum, text) => sum + count(text), 0);
    case 'file':
      return labels + Math.ceil(documentBytes(part) / 2);
    default:
      return labels + TOKENS_PER_REFERENCED_DOCUMENT;
  }
}
