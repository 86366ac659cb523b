import {
  type ChatRequest, checkDocumentLimits, type DocumentPart, documentBytes, documentTokens, estimateInputTokens, GatewayError, isBase64, pdfPages,
  PDF_BYTES_PER_ASSUMED_PAGE, requiredCapabilities, TOKENS_PER_PDF_PAGE, TOKENS_PER_REFERENCED_DOCUMENT,
} from '../../modules/canonical/index.js';
import { parseAnthropicMessagesRequest } from '../../modules/inference/formats/anthropic/anthropic-messages-request.js';
import { parseOpenAiChatRequest } from '../../modules/inference/formats/openai/openai-chat-request.js';
import { parseResponsesRequest } from '../../modules/inference/formats/responses/responses-request.js';
import { readDocumentOverrides, resolveDocumentLimits } from '../../modules/inference/pipeline/document-settings.js';
import { toConverseRequest } from '../../modules/providers/bedrock/bedrock-request.js';
import {
  ANTHROPIC_DOCUMENTS, BEDROCK_DOCUMENTS, GEMINI_DOCUMENTS, OPENAI_COMPATIBLE_DOCUMENTS, OPENAI_DOCUMENTS, requestedDocumentValue, unsupportedDocument,
} from '../../modules/providers/parameters/document-support.js';
import { ConfigurationError } from '../../src/kernel/index.js';
import { chatRequest } from '../support/provider-fixtures.js';

const PDF = Buffer.from('%PDF-1.7\n3 0 obj << /Type /Page >> endobj\n2 0 obj << /Type /Pages /Count 1 >> endobj\n%%EOF').toString('base64');

function document(source: DocumentPart['source'], extra: Partial<DocumentPart> = {}): DocumentPart {
  return { type: 'document', source, title: null, context: null, filename: null, at: 'messages[0].content[0]', ...extra };
}
function withDocuments(parts: DocumentPart[], text = 'Read'): ChatRequest {
  return chatRequest({ messages: [{ role: 'user', content: [...parts, ...(text ? [{ type: 'text' as const, text }] : [])] }] });
}

describe('canonical documents', () => {
  test('strict base64: padding and the alphabet, no whitespace or data-URL prefix', () => {
    expect(isBase64(PDF)).toBe(true);
    expect(isBase64('YQ==')).toBe(true);
    for (const bad of ['', 'YQ=', 'Y Q==', 'YQ==\n', 'data:application/pdf;base64,YQ==', 'YQ==YQ==', '****', '=AAA', 'A===', 'YQ-_']) expect(isBase64(bad)).toBe(false);
  });

  test('decoded sizes: base64 without its padding, text in UTF-8 bytes, references nothing', () => {
    expect(documentBytes(document({ type: 'base64', mediaType: 'application/pdf', data: Buffer.alloc(10).toString('base64') }))).toBe(10);
    expect(documentBytes(document({ type: 'text', text: 'é' }))).toBe(2);
    expect(documentBytes(document({ type: 'content', texts: ['ab', 'c'] }))).toBe(3);
    expect(documentBytes(document({ type: 'url', url: 'https://example.com/a.pdf' }))).toBe(0);
  });

  test('PDF pages: the visible page objects (not /Pages), else one a 50 KiB', () => {
    expect(pdfPages(PDF)).toBe(1);
    const compressed = Buffer.alloc(PDF_BYTES_PER_ASSUMED_PAGE * 2 + 1, 0x20).toString('base64');
    expect(pdfPages(compressed)).toBe(3);
  });

  test('token estimate: 4,000 a PDF page, text as counted, other files a token per 2 bytes, references one page', () => {
    const count = (text: string) => text.length; // a stand-in tokenizer: what each kind adds is what is checked
    expect(documentTokens(document({ type: 'base64', mediaType: 'application/pdf', data: PDF }), count)).toBe(TOKENS_PER_PDF_PAGE);
    expect(documentTokens(document({ type: 'text', text: 'hello' }, { title: 'T', context: 'ctx' }), count)).toBe(5 + 1 + 3);
    expect(documentTokens(document({ type: 'base64', mediaType: 'text/plain', data: Buffer.from('hello').toString('base64') }), count)).toBe(5);
    expect(documentTokens(document({ type: 'base64', mediaType: 'text/csv', data: Buffer.alloc(100).toString('base64') }), count)).toBe(50);
    expect(documentTokens(document({ type: 'file_id', fileId: 'file-1' }), count)).toBe(TOKENS_PER_REFERENCED_DOCUMENT);
    const request = withDocuments([document({ type: 'base64', mediaType: 'application/pdf', data: PDF })]);
    expect(estimateInputTokens(request)).toBeGreaterThan(TOKENS_PER_PDF_PAGE);
    expect(requiredCapabilities(request)).toContain('documents');
  });

  test('limits: the per-document bound names where the client put it; the request total names messages; 413 either way', () => {
    const limits = { maxDocumentBytes: 10, maxRequestDocumentBytes: 15 };
    const eight = document({ type: 'text', text: 'x'.repeat(8) }, { at: 'messages.0.content.1' });
    expect(() => checkDocumentLimits(withDocuments([eight]), limits)).not.toThrow();
    const tooBig = (() => { try { checkDocumentLimits(withDocuments([document({ type: 'text', text: 'x'.repeat(11) }, { at: 'messages.0.content.1' })]), limits); } catch (e) { return e; } return null; })();
    expect(tooBig).toBeInstanceOf(GatewayError);
    expect(tooBig).toMatchObject({ status: 413, code: 'request_too_large', param: 'messages.0.content.1' });
    const together = (() => { try { checkDocumentLimits(withDocuments([eight, eight]), limits); } catch (e) { return e; } return null; })();
    expect(together).toMatchObject({ status: 413, param: 'messages', detail: { limit: 'request_documents', bytes: 16, max_bytes: 15 } });
  });

  test('settings: positive integers; the request total may not be below the per-document limit', () => {
    expect(readDocumentOverrides({ SWITCHYARD_MAX_DOCUMENT_BYTES: '1000', SWITCHYARD_MAX_REQUEST_DOCUMENT_BYTES: '5000' })).toEqual({ maxDocumentBytes: 1000, maxRequestDocumentBytes: 5000 });
    expect(() => readDocumentOverrides({ SWITCHYARD_MAX_DOCUMENT_BYTES: '0' })).toThrow(ConfigurationError);
    expect(() => readDocumentOverrides({ SWITCHYARD_MAX_DOCUMENT_BYTES: 'lots' })).toThrow(ConfigurationError);
    expect(() => readDocumentOverrides({ SWITCHYARD_MAX_REQUEST_DOCUMENT_BYTES: '1024' })).toThrow(ConfigurationError);
    expect(resolveDocumentLimits()).toEqual({ maxDocumentBytes: 2 * 1024 * 1024, maxRequestDocumentBytes: 3 * 1024 * 1024 });
  });
});

describe('which provider format takes which document', () => {
  const pdf = document({ type: 'base64', mediaType: 'application/pdf', data: PDF });
  const text = document({ type: 'text', text: 'note' });
  const csv = document({ type: 'base64', mediaType: 'text/csv', data: 'YSxi' });
  const docx = document({ type: 'base64', mediaType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', data: 'UEsD' });
  const url = document({ type: 'url', url: 'https://example.com/a.pdf' });
  const content = document({ type: 'content', texts: ['a'] });
  const fileId = document({ type: 'file_id', fileId: 'file-1' });
  const withContext = document({ type: 'text', text: 'note' }, { context: 'draft' });
  const formats = { anthropic: ANTHROPIC_DOCUMENTS, openai: OPENAI_DOCUMENTS, compatible: OPENAI_COMPATIBLE_DOCUMENTS, gemini: GEMINI_DOCUMENTS, bedrock: BEDROCK_DOCUMENTS };
  const cases: Array<[string, DocumentPart, Record<keyof typeof formats, string | null>]> = [
    ['a PDF', pdf, { anthropic: null, openai: null, compatible: null, gemini: null, bedrock: null }],
    ['plain text', text, { anthropic: null, openai: null, compatible: null, gemini: null, bedrock: null }],
    ['a CSV', csv, { anthropic: 'documents[].media_type', openai: 'documents[].media_type', compatible: 'documents[].media_type', gemini: null, bedrock: null }],
    ['a Word file', docx, { anthropic: 'documents[].media_type', openai: 'documents[].media_type', compatible: 'documents[].media_type', gemini: 'documents[].media_type', bedrock: null }],
    ['a URL', url, { anthropic: null, openai: 'documents[].url', compatible: 'documents[].url', gemini: 'documents[].url', bedrock: 'documents[].url' }],
    ['custom content', content, { anthropic: null, openai: 'documents[].content', compatible: 'documents[].content', gemini: 'documents[].content', bedrock: 'documents[].content' }],
    ['an OpenAI file id', fileId, { anthropic: 'documents[].file_id', openai: null, compatible: 'documents[].file_id', gemini: 'documents[].file_id', bedrock: 'documents[].file_id' }],
    ['a context', withContext, { anthropic: null, openai: 'documents[].context', compatible: 'documents[].context', gemini: 'documents[].context', bedrock: 'documents[].context' }],
  ];
  test.each(cases)('%s', (_name, part, expected) => {
    for (const [format, support] of Object.entries(formats)) expect([format, unsupportedDocument(withDocuments([part]), support)]).toEqual([format, expected[format as keyof typeof formats]]);
  });

  test('Bedrock needs a text block in the message of a document', () => {
    expect(unsupportedDocument(withDocuments([pdf], ''), BEDROCK_DOCUMENTS)).toBe('documents[].text');
    expect(unsupportedDocument(withDocuments([pdf], ''), ANTHROPIC_DOCUMENTS)).toBeNull();
  });

  test('the value a refusal shows: the media types, URLs or ids asked for', () => {
    const request = withDocuments([csv, url, fileId, pdf]);
    expect(requestedDocumentValue(request, 'documents[].media_type')).toBe('text/csv, application/pdf');
    expect(requestedDocumentValue(request, 'documents[].url')).toBe('https://example.com/a.pdf');
    expect(requestedDocumentValue(request, 'documents[].file_id')).toBe('file-1');
    expect(requestedDocumentValue(request, 'documents[].context')).toBeNull();
  });

  test('Bedrock names: allowed characters only, unique within the request, a numbered default', () => {
    const body = toConverseRequest(withDocuments([
      { ...pdf, title: 'Q3: report.pdf' }, { ...pdf, title: 'Q3: report.pdf' }, { ...text }, { ...pdf, filename: '  a   b  ' },
    ]));
    const names = body.messages[0].content.filter((b) => b.document).map((b) => b.document!.name);
    expect(names).toEqual(['Q3- report-pdf', 'Q3- report-pdf (2)', 'document 3', 'a b']);
  });
});

describe('client formats parse documents strictly', () => {
  const anthropicBody = (block: unknown) => ({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: [block, { type: 'text', text: 'Read' }] }] });
  const errorOf = (fn: () => unknown): GatewayError => {
    try {
      fn();
    } catch (error) {
      return error as GatewayError;
    }
    throw new Error('expected a refusal');
  };

  test('Anthropic: base64 only as PDF, text only as text/plain, image content and Files API refused, fields named', () => {
    expect(errorOf(() => parseAnthropicMessagesRequest(anthropicBody({ type: 'document', source: { type: 'base64', media_type: 'text/plain', data: 'YQ==' } })))).toMatchObject({ status: 400, param: 'messages.0.content.0.source.media_type' });
    expect(errorOf(() => parseAnthropicMessagesRequest(anthropicBody({ type: 'document', source: { type: 'text', media_type: 'text/html', data: 'a' } })))).toMatchObject({ param: 'messages.0.content.0.source.media_type' });
    expect(errorOf(() => parseAnthropicMessagesRequest(anthropicBody({ type: 'document', source: { type: 'content', content: [{ type: 'image', source: {} }] } })))).toMatchObject({ code: 'unsupported_parameter', param: 'messages.0.content.0.source.content.0.type' });
    expect(errorOf(() => parseAnthropicMessagesRequest(anthropicBody({ type: 'document', source: { type: 'file', file_id: 'f' } })))).toMatchObject({ code: 'unsupported_parameter', param: 'messages.0.content.0.source.type' });
    expect(errorOf(() => parseAnthropicMessagesRequest(anthropicBody({ type: 'document', source: { type: 'url', url: 'ftp://x' } })))).toMatchObject({ param: 'messages.0.content.0.source.url' });
    expect(errorOf(() => parseAnthropicMessagesRequest(anthropicBody({ type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'a' }, extra: 1 })))).toMatchObject({ param: 'messages.0.content.0.extra' });
    const parsed = parseAnthropicMessagesRequest(anthropicBody({ type: 'document', source: { type: 'content', content: 'one' }, title: 'T', citations: { enabled: false } }));
    expect(parsed.messages[0].content[0]).toEqual({ type: 'document', source: { type: 'content', texts: ['one'] }, title: 'T', context: null, filename: null, at: 'messages.0.content.0' });
  });

  test('OpenAI Chat: file parts in user messages only, a data URL with a media type, no unknown fields', () => {
    const body = (content: unknown, role = 'user') => ({ model: 'm', messages: [{ role, content }] });
    expect(errorOf(() => parseOpenAiChatRequest(body([{ type: 'file', file: { file_data: `data:application/pdf;base64,${PDF}` } }], 'system')))).toMatchObject({ param: 'messages[0].content[0]' });
    expect(errorOf(() => parseOpenAiChatRequest(body([{ type: 'file', file: { file_data: PDF } }])))).toMatchObject({ param: 'messages[0].content[0].file.file_data' });
    expect(errorOf(() => parseOpenAiChatRequest(body([{ type: 'file', file: { file_id: 'f', purpose: 'x' } }])))).toMatchObject({ code: 'unsupported_parameter', param: 'messages[0].content[0].file.purpose' });
    const parsed = parseOpenAiChatRequest(body([{ type: 'file', file: { file_data: `data:Application/PDF;base64,${PDF}`, filename: 'a.pdf' } }]));
    expect(parsed.messages[0].content[0]).toEqual({ type: 'document', source: { type: 'base64', mediaType: 'application/pdf', data: PDF }, title: null, context: null, filename: 'a.pdf', at: 'messages[0].content[0]' });
  });

  test('Responses: input_file with exactly one source; detail only as auto', () => {
    const body = (part: unknown) => ({ model: 'm', input: [{ role: 'user', content: [part] }] });
    expect(errorOf(() => parseResponsesRequest(body({ type: 'input_file', file_id: 'f', file_url: 'https://x/a.pdf' })))).toMatchObject({ param: 'input[0].content[0]' });
    expect(errorOf(() => parseResponsesRequest(body({ type: 'input_file', file_id: 'f', detail: 'high' })))).toMatchObject({ code: 'unsupported_parameter', param: 'input[0].content[0].detail' });
    const parsed = parseResponsesRequest(body({ type: 'input_file', file_url: 'https://x/a.pdf', detail: 'auto' }));
    expect(parsed.messages[0].content[0]).toMatchObject({ type: 'document', source: { type: 'url', url: 'https://x/a.pdf' }, at: 'input[0].content[0]' });
  });
});
