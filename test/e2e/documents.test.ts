import Anthropic from '@anthropic-ai/sdk';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, streamText } from 'ai';
import OpenAI from 'openai';
import type { AttemptFinished, RequestAdmitted } from '../../events/request-events.js';
import { TOKENS_PER_PDF_PAGE } from '../../modules/canonical/index.js';
import { type TestGateway, startTestGateway } from '../support/gateway-harness.js';
import { acmeKeyYaml, mockProviderYaml } from '../support/anthropic-yaml.js';
import { AZURE_API_VERSION, BEDROCK_CREDENTIALS, BEDROCK_CREDENTIALS_ENV } from '../support/conformance.js';

/**
 * Documents end to end (issue 35 item 2): Anthropic `document` blocks, OpenAI Chat `file` parts and
 * Responses `input_file` items, from the official SDKs (and the Vercel AI SDK), to Anthropic, OpenAI,
 * Gemini and Bedrock routes on the mock provider, buffered and streamed — what the client got and what
 * the provider received. Unhappy paths first: bad base64 and oversized documents never reach a provider;
 * a route that cannot take a document kind is skipped (unsupported_parameter), and with none left the
 * client gets a 400 naming the document field.
 */
const PDF_TEXT = [
  '%PDF-1.4',
  '1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj',
  '2 0 obj << /Type /Pages /Kids [3 0 R 4 0 R] /Count 2 >> endobj',
  '3 0 obj << /Type /Page /Parent 2 0 R >> endobj',
  '4 0 obj << /Type/Page /Parent 2 0 R >> endobj',
  'trailer << /Root 1 0 R >>',
  '%%EOF',
].join('\n');
const PDF = Buffer.from(PDF_TEXT, 'latin1').toString('base64');
const PDF_URL = `data:application/pdf;base64,${PDF}`;
const NOTE = 'Quarterly note: revenue up 4%.';
/** Per-document and per-request limits this suite's gateway runs with (bytes, decoded). */
const MAX_DOCUMENT = 4096;
const MAX_REQUEST = 6144;

function documentsYaml(mockUrl: string, keyEnv: string): string {
  return `
providers:
${mockProviderYaml('mock-anthropic', 'anthropic', mockUrl)}${mockProviderYaml('mock-openai', 'openai', `${mockUrl}/v1`)}${mockProviderYaml('mock-gemini', 'gemini', mockUrl)}  - id: mock-azure
    type: azure-openai
    baseUrl: ${mockUrl}
    allowPrivateNetwork: true   # the mock listens on loopback
    apiKey: env:SY_TEST_UPSTREAM_KEY
    apiVersion: "${AZURE_API_VERSION}"
  - id: mock-bedrock
    type: bedrock
    region: us-east-1
    baseUrl: ${mockUrl}
    allowPrivateNetwork: true   # the mock listens on loopback
    apiKey: env:${BEDROCK_CREDENTIALS_ENV}
deployments:
  - id: claude-docs
    provider: mock-anthropic
    model: claude-docs-upstream
    capabilities: [chat, streaming, documents]
    contextWindow: 200000
    maxOutputTokens: 4096
    price: { inputPer1M: "3.00", outputPer1M: "15.00" }
  - id: claude-plain
    provider: mock-anthropic
    model: claude-plain-upstream
    capabilities: [chat, streaming]   # a model that does not read documents
    contextWindow: 200000
    maxOutputTokens: 4096
    price: { inputPer1M: "3.00", outputPer1M: "15.00" }
  - id: claude-small
    provider: mock-anthropic
    model: claude-small-upstream
    capabilities: [chat, streaming, documents]
    contextWindow: 6000   # one two-page PDF (8,000 estimated tokens) does not fit
    maxOutputTokens: 1024
    price: { inputPer1M: "3.00", outputPer1M: "15.00" }
  - id: gpt-docs
    provider: mock-openai
    model: gpt-docs-upstream
    capabilities: [chat, streaming, documents]
    contextWindow: 128000
    maxOutputTokens: 4096
    price: { inputPer1M: "2.50", outputPer1M: "10.00" }
  - id: azure-docs
    provider: mock-azure
    model: gpt4o-docs-eastus
    capabilities: [chat, streaming, documents]
    contextWindow: 128000
    maxOutputTokens: 4096
    price: { inputPer1M: "2.50", outputPer1M: "10.00" }
  - id: gemini-docs
    provider: mock-gemini
    model: gemini-2.5-flash
    capabilities: [chat, streaming, documents]
    contextWindow: 1048576
    maxOutputTokens: 8192
    price: { inputPer1M: "0.30", outputPer1M: "2.50" }
  - id: bedrock-docs
    provider: mock-bedrock
    model: anthropic.claude-3-5-sonnet-20240620-v1:0
    capabilities: [chat, streaming, documents]
    contextWindow: 200000
    maxOutputTokens: 4096
    price: { inputPer1M: "3.00", outputPer1M: "15.00" }
aliases:
  - name: claude-docs
    routes:
      - { deployment: claude-docs, priority: 0 }
  - name: claude-plain
    routes:
      - { deployment: claude-plain, priority: 0 }
  - name: claude-small
    routes:
      - { deployment: claude-small, priority: 0 }
  - name: gpt-docs
    routes:
      - { deployment: gpt-docs, priority: 0 }
  - name: gemini-docs
    routes:
      - { deployment: gemini-docs, priority: 0 }
  - name: azure-docs
    routes:
      - { deployment: azure-docs, priority: 0 }
  - name: bedrock-docs
    routes:
      - { deployment: bedrock-docs, priority: 0 }
  - name: gemini-then-claude
    routes:
      - { deployment: gemini-docs, priority: 0 }
      - { deployment: claude-docs, priority: 1 }
  - name: claude-then-gpt
    routes:
      - { deployment: claude-docs, priority: 0 }
      - { deployment: gpt-docs, priority: 1 }
  - name: claude-then-gemini
    routes:
      - { deployment: claude-docs, priority: 0 }
      - { deployment: gemini-docs, priority: 1 }
${acmeKeyYaml(keyEnv)}`;
}

type APIError = InstanceType<typeof OpenAI.APIError>;
type Json = Record<string, any>; // recorded wire bodies

const pdfFilePart = (filename = 'report.pdf'): OpenAI.ChatCompletionContentPart => ({ type: 'file', file: { file_data: PDF_URL, filename } });
const pdfDocument = (extra: Partial<Anthropic.DocumentBlockParam> = {}): Anthropic.DocumentBlockParam => ({
  type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: PDF }, ...extra,
});

describe('documents end to end', () => {
  let gw: TestGateway;
  let openai: OpenAI;
  let anthropic: Anthropic;

  beforeAll(async () => {
    process.env[BEDROCK_CREDENTIALS_ENV] = BEDROCK_CREDENTIALS;
    gw = await startTestGateway({ yaml: documentsYaml, environment: { documents: { maxDocumentBytes: MAX_DOCUMENT, maxRequestDocumentBytes: MAX_REQUEST } } });
    openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key, maxRetries: 0 });
    anthropic = new Anthropic({ baseURL: gw.url, apiKey: gw.key, maxRetries: 0 });
  });
  afterAll(async () => {
    await gw?.close();
  });
  beforeEach(() => {
    gw.mock.clearScenarios();
    gw.mock.clearRequests();
  });

  const upstream = () => gw.mock.requests();
  const attemptsOf = async (requestId: string) =>
    (await gw.requestEvents(requestId)).filter((e) => e.type === 'AttemptFinished').map((e) => e.data as AttemptFinished['data']);

  describe('unhappy paths: nothing reaches a provider', () => {
    test('OpenAI Chat: file_data that is not base64 is a 400 naming the field', async () => {
      const error = await openai.chat.completions.create({
        model: 'claude-docs',
        messages: [{ role: 'user', content: [{ type: 'text', text: 'Summarise' }, { type: 'file', file: { file_data: 'data:application/pdf;base64,not base64!', filename: 'a.pdf' } }] }],
      }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect((error as APIError).param).toBe('messages[0].content[1].file.file_data');
      expect(upstream()).toHaveLength(0);
    });

    test('OpenAI Chat: file_data and file_id together, or neither, is a 400', async () => {
      for (const file of [{ file_data: PDF_URL, file_id: 'file-abc' }, { filename: 'a.pdf' }]) {
        const error = await openai.chat.completions.create({ model: 'gpt-docs', messages: [{ role: 'user', content: [{ type: 'file', file }] }] }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(OpenAI.BadRequestError);
        expect((error as APIError).param).toBe('messages[0].content[0].file');
      }
      expect(upstream()).toHaveLength(0);
    });

    test('Anthropic: a document whose base64 is broken is an invalid_request_error naming the field', async () => {
      const error = await anthropic.messages.create({
        model: 'claude-docs', max_tokens: 64,
        messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBER i0x' } }, { type: 'text', text: 'Summarise' }] }],
      }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Anthropic.BadRequestError);
      expect((error as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message: expect.stringContaining('messages.0.content.0.source.data') } });
      expect(upstream()).toHaveLength(0);
    });

    test('Responses: input_file with no source is a 400', async () => {
      const error = await openai.responses.create({
        model: 'gpt-docs', input: [{ role: 'user', content: [{ type: 'input_file', filename: 'a.pdf' }] }],
      }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect((error as APIError).param).toBe('input[0].content[0]');
      expect(upstream()).toHaveLength(0);
    });

    test('a document over the per-document limit: 413 in each client format, nothing reserved or sent', async () => {
      const big = Buffer.alloc(MAX_DOCUMENT + 1, 0x41).toString('base64');
      const before = await gw.countEvents(['RequestAdmitted']);
      const openaiError = await openai.chat.completions.create({
        model: 'gpt-docs', messages: [{ role: 'user', content: [{ type: 'text', text: 'Read' }, { type: 'file', file: { file_data: `data:application/pdf;base64,${big}`, filename: 'big.pdf' } }] }],
      }).catch((e: unknown) => e);
      expect(openaiError).toBeInstanceOf(OpenAI.APIError);
      expect((openaiError as APIError).status).toBe(413);
      expect((openaiError as APIError).param).toBe('messages[0].content[1]');
      expect((openaiError as APIError).message).toContain(`${MAX_DOCUMENT + 1} bytes`);

      const anthropicError = await anthropic.messages.create({
        model: 'claude-docs', max_tokens: 64,
        messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'x'.repeat(MAX_DOCUMENT + 1) } }, { type: 'text', text: 'Read' }] }],
      }).catch((e: unknown) => e);
      expect(anthropicError).toBeInstanceOf(Anthropic.APIError);
      expect((anthropicError as InstanceType<typeof Anthropic.APIError>).status).toBe(413);
      expect((anthropicError as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ error: { type: 'request_too_large', message: expect.stringContaining('messages.0.content.0') } });
      expect(upstream()).toHaveLength(0);
      expect(await gw.countEvents(['RequestAdmitted'])).toBe(before);
    });

    test('documents together over the per-request limit: 413, nothing sent', async () => {
      const part = Buffer.alloc(MAX_DOCUMENT - 1, 0x42).toString('base64');
      const error = await openai.responses.create({
        model: 'gpt-docs',
        input: [{ role: 'user', content: [
          { type: 'input_text', text: 'Compare' },
          { type: 'input_file', file_data: `data:application/pdf;base64,${part}`, filename: 'a.pdf' },
          { type: 'input_file', file_data: `data:application/pdf;base64,${part}`, filename: 'b.pdf' },
        ] }],
      }).catch((e: unknown) => e);
      expect((error as APIError).status).toBe(413);
      expect((error as APIError).message).toContain(`${MAX_REQUEST} bytes`);
      expect(upstream()).toHaveLength(0);
    });

    test('an alias whose model does not read documents: 400 naming messages (the routes lack documents)', async () => {
      const error = await openai.chat.completions.create({ model: 'claude-plain', messages: [{ role: 'user', content: [{ type: 'text', text: 'Read' }, pdfFilePart()] }] }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect((error as APIError).message).toContain('lack documents');
      expect((error as APIError).param).toBe('messages');
      expect(upstream()).toHaveLength(0);
    });

    test('an OpenAI file id on Anthropic and Gemini routes: no route can take it, 400 naming documents[].file_id', async () => {
      const error = await openai.chat.completions.create({
        model: 'claude-then-gemini', messages: [{ role: 'user', content: [{ type: 'text', text: 'Read' }, { type: 'file', file: { file_id: 'file-abc123' } }] }],
      }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect((error as APIError).param).toBe('documents[].file_id');
      expect((error as APIError).message).toContain("Unsupported parameter 'documents[].file_id' (file-abc123)");
      expect(upstream()).toHaveLength(0);
    });

    test('a document URL on Gemini (whose fileData takes only its own Files API URIs): 400 naming documents[].url', async () => {
      const error = await openai.responses.create({
        model: 'gemini-docs', input: [{ role: 'user', content: [{ type: 'input_text', text: 'Read' }, { type: 'input_file', file_url: 'https://example.com/a.pdf' }] }],
      }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect((error as APIError).param).toBe('documents[].url');
      expect(upstream()).toHaveLength(0);
    });

    test('Anthropic citations enabled: refused (the answer could not carry them back), nothing sent', async () => {
      const error = await anthropic.messages.create({
        model: 'claude-docs', max_tokens: 64, messages: [{ role: 'user', content: [pdfDocument({ citations: { enabled: true } }), { type: 'text', text: 'Cite' }] }],
      }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Anthropic.BadRequestError);
      expect((error as InstanceType<typeof Anthropic.APIError>).message).toContain('messages.0.content.0.citations');
      expect(upstream()).toHaveLength(0);
    });

    test('the estimate counts a PDF by its pages: two pages (8,000 tokens) do not fit a 6,000-token window', async () => {
      const error = await anthropic.messages.create({
        model: 'claude-small', max_tokens: 64, messages: [{ role: 'user', content: [pdfDocument(), { type: 'text', text: 'Summarise' }] }],
      }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Anthropic.BadRequestError);
      expect((error as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ error: { message: expect.stringMatching(/^prompt is too long: 80\d\d tokens > 6000 maximum/) } });
      expect(upstream()).toHaveLength(0);
    });
  });

  describe('OpenAI SDK, Chat Completions file parts', () => {
    test('buffered to Anthropic: a document block with the PDF, the filename as its title; admission counts the pages', async () => {
      const { data: completion, response } = await openai.chat.completions
        .create({ model: 'claude-docs', messages: [{ role: 'user', content: [{ type: 'text', text: 'Summarise' }, pdfFilePart()] }] })
        .withResponse();
      expect(completion.choices[0].message.content).toEqual(expect.any(String));
      expect(upstream()).toHaveLength(1);
      expect(upstream()[0]).toMatchObject({ format: 'anthropic', model: 'claude-docs-upstream' });
      expect((upstream()[0].body as Json).messages[0].content).toEqual([
        { type: 'text', text: 'Summarise' },
        { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: PDF }, title: 'report.pdf' },
      ]);
      const admitted = (await gw.requestEvents(response.headers.get('x-request-id')!)).find((e) => e.type === 'RequestAdmitted')!.data as RequestAdmitted['data'];
      expect(admitted.estimatedInputTokens).toBeGreaterThanOrEqual(2 * TOKENS_PER_PDF_PAGE);
    });

    test('streamed to Gemini: inlineData with the media type', async () => {
      const stream = await openai.chat.completions.create({ model: 'gemini-docs', stream: true, messages: [{ role: 'user', content: [{ type: 'text', text: 'Summarise' }, pdfFilePart()] }] });
      let text = '';
      for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
      expect(text.length).toBeGreaterThan(0);
      expect(upstream()).toHaveLength(1);
      expect(upstream()[0]).toMatchObject({ format: 'gemini', stream: true });
      expect((upstream()[0].body as Json).contents[0].parts).toEqual([{ text: 'Summarise' }, { inlineData: { mimeType: 'application/pdf', data: PDF } }]);
    });

    test('streamed to Bedrock: a document block (format pdf, a Converse-safe name, bytes) beside the text', async () => {
      const stream = await openai.chat.completions.create({ model: 'bedrock-docs', stream: true, messages: [{ role: 'user', content: [{ type: 'text', text: 'Summarise' }, pdfFilePart('Q3 report.pdf')] }] });
      let text = '';
      for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
      expect(text.length).toBeGreaterThan(0);
      expect(upstream()[0]).toMatchObject({ format: 'bedrock', stream: true });
      expect((upstream()[0].body as Json).messages[0].content).toEqual([{ text: 'Summarise' }, { document: { format: 'pdf', name: 'Q3 report-pdf', source: { bytes: PDF } } }]);
    });

    test('a file id skips the Anthropic route (recorded) and reaches OpenAI as sent', async () => {
      const { response } = await openai.chat.completions
        .create({ model: 'claude-then-gpt', messages: [{ role: 'user', content: [{ type: 'text', text: 'Read' }, { type: 'file', file: { file_id: 'file-abc123' } }] }] })
        .withResponse();
      expect(upstream()).toHaveLength(1);
      expect(upstream()[0]).toMatchObject({ format: 'openai', model: 'gpt-docs-upstream' });
      expect((upstream()[0].body as Json).messages[0].content).toEqual([{ type: 'text', text: 'Read' }, { type: 'file', file: { file_id: 'file-abc123' } }]);
      const [attempt] = await attemptsOf(response.headers.get('x-request-id')!);
      expect(attempt.routing.reason).toContain('claude-docs (unsupported_parameter: documents[].file_id)');
    });
  });

  describe('Anthropic SDK, document blocks', () => {
    test('buffered to OpenAI: the PDF as a file part (data URL, title as filename), a text document as a text part', async () => {
      const message = await anthropic.messages.create({
        model: 'gpt-docs', max_tokens: 64,
        messages: [{ role: 'user', content: [
          pdfDocument({ title: 'Q3' }),
          { type: 'document', source: { type: 'text', media_type: 'text/plain', data: NOTE } },
          { type: 'text', text: 'Summarise both' },
        ] }],
      });
      expect(message.content[0]).toMatchObject({ type: 'text', text: expect.any(String) });
      expect(upstream()[0]).toMatchObject({ format: 'openai' });
      expect((upstream()[0].body as Json).messages[0].content).toEqual([
        { type: 'file', file: { file_data: PDF_URL, filename: 'Q3' } },
        { type: 'text', text: NOTE },
        { type: 'text', text: 'Summarise both' },
      ]);
    });

    test('streamed to Anthropic: text, URL and custom-content sources with title, context and cache_control pass as sent', async () => {
      const stream = anthropic.messages.stream({
        model: 'claude-docs', max_tokens: 64,
        messages: [{ role: 'user', content: [
          { type: 'document', source: { type: 'text', media_type: 'text/plain', data: NOTE }, title: 'Note', context: 'Internal, draft', cache_control: { type: 'ephemeral' } },
          { type: 'document', source: { type: 'url', url: 'https://example.com/letter.pdf' } },
          { type: 'document', source: { type: 'content', content: [{ type: 'text', text: 'Part one' }, { type: 'text', text: 'Part two' }] } },
          { type: 'text', text: 'Summarise' },
        ] }],
      });
      const final = await stream.finalMessage();
      expect(final.content[0]).toMatchObject({ type: 'text' });
      expect(upstream()[0]).toMatchObject({ format: 'anthropic', stream: true });
      expect((upstream()[0].body as Json).messages[0].content).toEqual([
        { type: 'document', source: { type: 'text', media_type: 'text/plain', data: NOTE }, title: 'Note', context: 'Internal, draft', cache_control: { type: 'ephemeral' } },
        { type: 'document', source: { type: 'url', url: 'https://example.com/letter.pdf' } },
        { type: 'document', source: { type: 'content', content: [{ type: 'text', text: 'Part one' }, { type: 'text', text: 'Part two' }] } },
        { type: 'text', text: 'Summarise' },
      ]);
    });

    test('a URL document skips Gemini (recorded) and reaches the Anthropic route', async () => {
      const { response } = await anthropic.messages
        .create({ model: 'gemini-then-claude', max_tokens: 64, messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'url', url: 'https://example.com/a.pdf' } }, { type: 'text', text: 'Read' }] }] })
        .withResponse();
      expect(upstream()).toHaveLength(1);
      expect(upstream()[0]).toMatchObject({ format: 'anthropic' });
      const [attempt] = await attemptsOf(response.headers.get('x-request-id')!);
      expect(attempt.routing.reason).toContain('gemini-docs (unsupported_parameter: documents[].url)');
    });

    test('buffered to Bedrock: a text document as a txt document block named after its title', async () => {
      await anthropic.messages.create({
        model: 'bedrock-docs', max_tokens: 64,
        messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'text', media_type: 'text/plain', data: NOTE }, title: 'note.txt' }, { type: 'text', text: 'Read' }] }],
      });
      expect((upstream()[0].body as Json).messages[0].content).toEqual([
        { document: { format: 'txt', name: 'note-txt', source: { bytes: Buffer.from(NOTE).toString('base64') } } },
        { text: 'Read' },
      ]);
    });
  });

  describe('Azure OpenAI (the OpenAI wire format without OpenAI\'s files)', () => {
    test('Anthropic SDK, streamed: the PDF as a file part on the Azure deployment path', async () => {
      const stream = anthropic.messages.stream({ model: 'azure-docs', max_tokens: 64, messages: [{ role: 'user', content: [pdfDocument(), { type: 'text', text: 'Summarise' }] }] });
      expect((await stream.finalMessage()).content[0]).toMatchObject({ type: 'text' });
      expect(upstream()[0].path).toContain('/openai/deployments/gpt4o-docs-eastus/chat/completions');
      expect((upstream()[0].body as Json).messages[0].content).toEqual([
        { type: 'file', file: { file_data: PDF_URL, filename: 'document.pdf' } },
        { type: 'text', text: 'Summarise' },
      ]);
    });

    test('an OpenAI file id cannot go to Azure: 400 naming documents[].file_id, nothing sent', async () => {
      const error = await openai.chat.completions.create({
        model: 'azure-docs', messages: [{ role: 'user', content: [{ type: 'text', text: 'Read' }, { type: 'file', file: { file_id: 'file-abc123' } }] }],
      }).catch((e: unknown) => e);
      expect((error as APIError).param).toBe('documents[].file_id');
      expect(upstream()).toHaveLength(0);
    });
  });

  describe('token counting (/v1/messages/count_tokens)', () => {
    test('an Anthropic route counts with the document as sent', async () => {
      const { response } = await anthropic.messages.countTokens({ model: 'claude-docs', messages: [{ role: 'user', content: [pdfDocument(), { type: 'text', text: 'Summarise' }] }] }).withResponse();
      expect(response.headers.get('x-switchyard-token-count')).toBe('provider');
      expect(upstream()[0]).toMatchObject({ format: 'anthropic-count-tokens' });
      expect((upstream()[0].body as Json).messages[0].content[0]).toEqual({ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: PDF } });
    });

    test('a route without a count endpoint answers the estimate: 4,000 tokens a PDF page', async () => {
      const { data, response } = await anthropic.messages.countTokens({ model: 'gpt-docs', messages: [{ role: 'user', content: [pdfDocument(), { type: 'text', text: 'Summarise' }] }] }).withResponse();
      expect(response.headers.get('x-switchyard-token-count')).toBe('estimate');
      expect(data.input_tokens).toBeGreaterThanOrEqual(2 * TOKENS_PER_PDF_PAGE);
      expect(upstream()).toHaveLength(0);
    });

    test('the size limits hold for a count too: 413, nothing sent', async () => {
      const error = await anthropic.messages.countTokens({
        model: 'claude-docs', messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'x'.repeat(MAX_DOCUMENT + 1) } }, { type: 'text', text: 'Read' }] }],
      }).catch((e: unknown) => e);
      expect((error as InstanceType<typeof Anthropic.APIError>).status).toBe(413);
      expect(upstream()).toHaveLength(0);
    });
  });

  describe('OpenAI SDK, Responses input_file', () => {
    test('a CSV file_data reaches Gemini as inline data with its media type', async () => {
      const csv = Buffer.from('a,b\n1,2\n').toString('base64');
      const response = await openai.responses.create({
        model: 'gemini-docs',
        input: [{ role: 'user', content: [{ type: 'input_text', text: 'Total?' }, { type: 'input_file', file_data: `data:text/csv;base64,${csv}`, filename: 'sheet.csv' }] }],
      });
      expect(response.output_text.length).toBeGreaterThan(0);
      expect((upstream()[0].body as Json).contents[0].parts[1]).toEqual({ inlineData: { mimeType: 'text/csv', data: csv } });
    });

    test('a CSV cannot go to OpenAI Chat Completions (PDF only): 400 naming documents[].media_type (text/csv)', async () => {
      const error = await openai.responses.create({
        model: 'gpt-docs',
        input: [{ role: 'user', content: [{ type: 'input_text', text: 'Total?' }, { type: 'input_file', file_data: 'data:text/csv;base64,YSxiCjEsMgo=', filename: 'sheet.csv' }] }],
      }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect((error as APIError).param).toBe('documents[].media_type');
      expect((error as APIError).message).toContain('(text/csv)');
      expect(upstream()).toHaveLength(0);
    });

    test('streamed: file_id to OpenAI', async () => {
      const stream = await openai.responses.create({
        model: 'gpt-docs', stream: true,
        input: [{ role: 'user', content: [{ type: 'input_text', text: 'Read' }, { type: 'input_file', file_id: 'file-xyz' }] }],
      });
      let done = false;
      for await (const event of stream) if (event.type === 'response.completed') done = true;
      expect(done).toBe(true);
      expect((upstream()[0].body as Json).messages[0].content[1]).toEqual({ type: 'file', file: { file_id: 'file-xyz' } });
    });
  });

  describe('Vercel AI SDK file parts', () => {
    test('@ai-sdk/anthropic generateText: a PDF file part arrives at Bedrock as a document block', async () => {
      const provider = createAnthropic({ baseURL: `${gw.url}/v1`, apiKey: gw.key });
      const result = await generateText({
        model: provider('bedrock-docs'), maxRetries: 0, maxOutputTokens: 64,
        messages: [{ role: 'user', content: [{ type: 'text', text: 'Summarise' }, { type: 'file', data: Buffer.from(PDF_TEXT, 'latin1'), mediaType: 'application/pdf', filename: 'r.pdf' }] }],
      });
      expect(result.text.length).toBeGreaterThan(0);
      const content = (upstream()[0].body as Json).messages[0].content as Json[];
      expect(content).toContainEqual({ document: { format: 'pdf', name: expect.any(String), source: { bytes: PDF } } });
    });

    test('@ai-sdk/openai streamText (Responses): a PDF file part arrives at Anthropic as a document block', async () => {
      const provider = createOpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key });
      const result = streamText({
        model: provider('claude-docs'), maxRetries: 0, maxOutputTokens: 64,
        messages: [{ role: 'user', content: [{ type: 'text', text: 'Summarise' }, { type: 'file', data: Buffer.from(PDF_TEXT, 'latin1'), mediaType: 'application/pdf', filename: 'r.pdf' }] }],
      });
      expect((await result.text).length).toBeGreaterThan(0);
      const content = (upstream()[0].body as Json).messages[0].content as Json[];
      expect(content).toContainEqual({ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: PDF }, title: 'r.pdf' });
    });
  });
});
