import { type ChatRequest, type DocumentKind, documentKind, documentsOf } from '../../canonical/index.js';

/**
 * Which documents one provider format can take (canonical DocumentPart; kinds in canonical/document.ts).
 * A request with a document the format cannot take makes the route ineligible (unsupported_parameter,
 * naming the field below); only when no route is left does the client get a 400. The deployment must also
 * declare the `documents` capability: whether a model reads PDFs is the model's, not the wire format's.
 */
export interface DocumentSupport {
  kinds: ReadonlySet<DocumentKind>;
  /** Media types of the `file` kind (base64 other than PDF and text/plain) the format takes. */
  fileTypes: ReadonlySet<string>;
  /** Anthropic's `context` (text about the document) has a place on the wire. */
  context: boolean;
  /** Bedrock Converse refuses a message holding a document without a text block beside it. */
  needsTextBeside?: boolean;
  /** How the documents travel, for docs/providers.md and the reference. */
  wire: string;
}

/** The field a refusal names, by what the format could not take. */
export const DOCUMENT_FIELDS: Readonly<Record<DocumentKind | 'context' | 'text_beside', string>> = Object.freeze({
  pdf: 'documents[].media_type',
  text: 'documents[].media_type',
  file: 'documents[].media_type',
  url: 'documents[].url',
  content: 'documents[].content',
  file_id: 'documents[].file_id',
  context: 'documents[].context',
  text_beside: 'documents[].text',
});

/** The first document of the request this format cannot take, as the field to name, or null. */
export function unsupportedDocument(request: ChatRequest, support: DocumentSupport): string | null {
  for (const message of request.messages) {
    const documents = message.content.filter((p) => p.type === 'document');
    if (documents.length === 0) continue;
    for (const part of documents) {
      const kind = documentKind(part);
      if (!support.kinds.has(kind)) return DOCUMENT_FIELDS[kind];
      if (kind === 'file' && part.source.type === 'base64' && !support.fileTypes.has(part.source.mediaType)) return DOCUMENT_FIELDS.file;
      if (part.context !== null && !support.context) return DOCUMENT_FIELDS.context;
    }
    if (support.needsTextBeside && !message.content.some((p) => p.type === 'text' && p.text.length > 0)) return DOCUMENT_FIELDS.text_beside;
  }
  return null;
}

/** What a refusal asked for, for the 400's "(…)": the media types, URLs or file ids the documents carry. */
export function requestedDocumentValue(request: ChatRequest, field: string): string | null {
  const values = new Set<string>();
  for (const part of documentsOf(request)) {
    const source = part.source;
    if (field === DOCUMENT_FIELDS.file && source.type === 'base64') values.add(source.mediaType);
    if (field === DOCUMENT_FIELDS.url && source.type === 'url') values.add(source.url);
    if (field === DOCUMENT_FIELDS.file_id && source.type === 'file_id') values.add(source.fileId);
  }
  return values.size > 0 ? [...values].join(', ') : null;
}

const kinds = (...list: DocumentKind[]): ReadonlySet<DocumentKind> => new Set(list);

/** Anthropic Messages: `document` blocks with base64 PDF, text, URL and custom content sources, title and context. */
export const ANTHROPIC_DOCUMENTS: DocumentSupport = Object.freeze({
  kinds: kinds('pdf', 'text', 'url', 'content'),
  fileTypes: new Set<string>(),
  context: true,
  wire: '`document` blocks: base64 PDF (`source.type: base64`), text (`source.type: text`; base64 text/plain is decoded), `url`, custom `content`; `title`, `context`, `cache_control`',
});

/**
 * OpenAI Chat Completions takes PDFs only as `file` parts (file_data or an uploaded file_id). A text
 * document becomes a text part, which is what OpenAI's own guide says to do with text files there.
 * Only OpenAI itself holds the files its ids name.
 */
export const OPENAI_DOCUMENTS: DocumentSupport = Object.freeze({
  kinds: kinds('pdf', 'text', 'file_id'),
  fileTypes: new Set<string>(),
  context: false,
  wire: '`file` parts: PDF as `file.file_data` (a data URL) with `file.filename`, `file.file_id` as sent; text documents become text parts',
});

/** Azure OpenAI and OpenAI-compatible servers: the same file parts, but an OpenAI file id means nothing to them. */
export const OPENAI_COMPATIBLE_DOCUMENTS: DocumentSupport = Object.freeze({
  kinds: kinds('pdf', 'text'),
  fileTypes: new Set<string>(),
  context: false,
  wire: '`file` parts with `file.file_data` (PDF only); text documents become text parts; no file ids (those are OpenAI\'s own)',
});

/** Gemini reads PDFs and text-like files as `inlineData`; its `fileData` takes only its own Files API URIs, not a public URL. */
export const GEMINI_DOCUMENTS: DocumentSupport = Object.freeze({
  kinds: kinds('pdf', 'text', 'file'),
  fileTypes: new Set([
    'text/html', 'text/css', 'text/markdown', 'text/md', 'text/csv', 'text/xml', 'text/rtf', 'text/javascript', 'application/x-javascript',
    'text/x-python', 'application/x-python',
  ]),
  context: false,
  wire: '`inlineData` with the media type (`mimeType`) and base64 `data`; text documents as text/plain',
});

/** Media type → Bedrock Converse document format. */
export const BEDROCK_DOCUMENT_FORMATS: Readonly<Record<string, string>> = Object.freeze({
  'application/pdf': 'pdf',
  'text/plain': 'txt',
  'text/csv': 'csv',
  'text/html': 'html',
  'text/markdown': 'md',
  'application/msword': 'doc',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'docx',
  'application/vnd.ms-excel': 'xls',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': 'xlsx',
});

/** Bedrock Converse: `document` blocks (format, name, source.bytes), each beside a text block in its message. */
export const BEDROCK_DOCUMENTS: DocumentSupport = Object.freeze({
  kinds: kinds('pdf', 'text', 'file'),
  fileTypes: new Set(Object.keys(BEDROCK_DOCUMENT_FORMATS).filter((t) => t !== 'application/pdf' && t !== 'text/plain')),
  context: false,
  needsTextBeside: true,
  wire: '`document` blocks: `format` (pdf, txt, csv, html, md, doc, docx, xls, xlsx), `name` (the title or filename, reduced to the characters Bedrock allows), `source.bytes`',
});

/** Each provider format's document support, in the reference's order (docs/reference/parameters.md). */
export const DOCUMENT_SUPPORT: ReadonlyArray<readonly [string, DocumentSupport]> = [
  ['openai, mock', OPENAI_DOCUMENTS],
  ['azure-openai', OPENAI_COMPATIBLE_DOCUMENTS],
  ['openai-compatible', OPENAI_COMPATIBLE_DOCUMENTS],
  ['anthropic', ANTHROPIC_DOCUMENTS],
  ['gemini', GEMINI_DOCUMENTS],
  ['bedrock', BEDROCK_DOCUMENTS],
];

const KIND_LABELS: Readonly<Record<DocumentKind, string>> = Object.freeze({
  pdf: 'PDF (base64)', text: 'plain text', file: 'other files (base64)', url: 'URL', content: 'custom content', file_id: 'OpenAI file id',
});

/** The document support as one Markdown table: a row per document kind (and context), a column per provider format. */
export function renderDocumentTable(): string {
  const header = `| document | ${DOCUMENT_SUPPORT.map(([name]) => name).join(' | ')} |`;
  const rule = `|---|${DOCUMENT_SUPPORT.map(() => '---').join('|')}|`;
  const rows = (Object.keys(KIND_LABELS) as DocumentKind[]).map((kind) => {
    const cells = DOCUMENT_SUPPORT.map(([, support]) => {
      if (!support.kinds.has(kind)) return '—';
      return kind === 'file' ? [...support.fileTypes].map((t) => `\`${t}\``).join(', ') : 'yes';
    });
    return `| ${KIND_LABELS[kind]} (\`${DOCUMENT_FIELDS[kind]}\`) | ${cells.join(' | ')} |`;
  });
  const context = `| Anthropic \`context\` (\`${DOCUMENT_FIELDS.context}\`) | ${DOCUMENT_SUPPORT.map(([, s]) => (s.context ? 'yes' : '—')).join(' | ')} |`;
  const wire = `| on the wire | ${DOCUMENT_SUPPORT.map(([, s]) => s.wire.replace(/\|/g, '\\|')).join(' | ')} |`;
  return [header, rule, ...rows, context, wire].join('\n');
}
