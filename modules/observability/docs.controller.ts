import { Controller, Get, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { readFileSync } from 'node:fs';

/** The committed OpenAPI document (docs/openapi.json), read once; a test keeps it in step with the routes. */
const OPENAPI_TEXT = readFileSync(new URL('../../../docs/openapi.json', import.meta.url), 'utf8');

/** `GET /docs`: the OpenAPI 3.1 document of the data plane and the admin API; `/docs/index.html` lists it for a browser. */
@Controller('docs')
export class DocsController {
  private readonly page = operationsPage(JSON.parse(OPENAPI_TEXT));

  @Get()
  async openApi(@Res() reply: FastifyReply): Promise<void> {
    await reply.header('content-type', 'application/json; charset=utf-8').send(OPENAPI_TEXT);
  }

  @Get('index.html')
  async html(@Res() reply: FastifyReply): Promise<void> {
    await reply.header('content-type', 'text/html; charset=utf-8').send(this.page);
  }
}

interface OpenApiDocument {
  info: { title: string; version: string; description?: string };
  paths: Record<string, Record<string, { summary?: string; tags?: string[] }>>;
}

/** A plain page: one table row per operation, no scripts, nothing fetched from elsewhere. */
function operationsPage(document: OpenApiDocument): string {
  const escape = (text: string) => text.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);
  const rows = Object.entries(document.paths).flatMap(([path, operations]) =>
    Object.entries(operations).map(([method, operation]) =>
      `<tr><td>${escape(operation.tags?.[0] ?? '')}</td><td><code>${method.toUpperCase()}</code></td><td><code>${escape(path)}</code></td><td>${escape(operation.summary ?? '')}</td></tr>`),
  );
  return `<!doctype html><html><head><meta charset="utf-8"><title>${escape(document.info.title)} API</title>
<style>body{font-family:system-ui,sans-serif;margin:2rem}td,th{padding:.25rem .75rem;text-align:left;border-bottom:1px solid #ddd}</style></head>
<body><h1>${escape(document.info.title)} ${escape(document.info.version)}</h1><p>${escape(document.info.description ?? '')}</p>
<p>The machine-readable document: <a href="/docs">/docs</a> (OpenAPI 3.1).</p>
<table><tr><th>area</th><th>method</th><th>path</th><th>what</th></tr>
${rows.join('\n')}
</table></body></html>`;
}
