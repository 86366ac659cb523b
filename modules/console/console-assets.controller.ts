import { Controller, Get, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { consoleSecurityHeaders } from './console-security-headers.js';

/** Where `npm run build:console` (Vite, console/vite.config.ts) writes the console: dist/console beside dist/modules. */
const BUILD = fileURLToPath(new URL('../../console/', import.meta.url));

/** Vite's hashed file names: a name never changes content, so a browser keeps it for a year. */
const ASSET = /^assets\/[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const IMMUTABLE = 'public, max-age=31536000, immutable';

const CONTENT_TYPES: Record<string, string> = {
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  svg: 'image/svg+xml',
  png: 'image/png',
  woff2: 'font/woff2',
  json: 'application/json; charset=utf-8',
};

/**
 * `GET /console` and `GET /console/*` on the main listener: the single-page app. Paths under assets/ are its
 * hashed files (404 when unknown, so a stale page fails visibly rather than getting HTML for a script); every
 * other path is a page of the app's own routing and gets index.html, never cached, so a new build is picked
 * up on the next load. `/console/api/*` belongs to the session routes: an unknown one is a JSON 404.
 */
@Controller('console')
export class ConsoleAssetsController {
  private readonly files = new Map<string, Buffer>();

  @Get()
  async root(@Res() reply: FastifyReply): Promise<void> {
    await this.page(reply);
  }

  @Get('*')
  async anyPath(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const relative = (request.params as Record<string, string | undefined>)['*'] ?? '';
    if (relative === 'api' || relative.startsWith('api/')) {
      await secured(reply, 'no-store').status(404)
        .send({ error: { code: 'not_found', message: `Unknown console API route /console/${relative}.` } });
      return;
    }
    if (relative.startsWith('assets/')) {
      await this.asset(relative, reply);
      return;
    }
    await this.page(reply);
  }

  private async page(reply: FastifyReply): Promise<void> {
    // Read per request (a few hundred bytes): a rebuild while the gateway runs is served at once.
    const index = join(BUILD, 'index.html');
    if (!existsSync(index)) {
      await secured(reply, 'no-store').status(503).header('content-type', 'text/plain; charset=utf-8')
        .send('The console is not built: run `npm run build:console` (or `npm start`, which builds it), then reload.\n');
      return;
    }
    await secured(reply, 'no-store').header('content-type', 'text/html; charset=utf-8').send(readFileSync(index));
  }

  private async asset(relative: string, reply: FastifyReply): Promise<void> {
    const type = CONTENT_TYPES[relative.slice(relative.lastIndexOf('.') + 1)];
    const body = ASSET.test(relative) && type ? this.file(relative) : null;
    if (!body || !type) {
      await secured(reply, 'no-store').status(404).header('content-type', 'text/plain; charset=utf-8')
        .send(`No console asset /console/${relative}.\n`);
      return;
    }
    await secured(reply, IMMUTABLE).header('content-type', type).send(body);
  }

  /** A hashed file never changes, so it is read once; the name was checked against ASSET (no `..`, no `/`). */
  private file(relative: string): Buffer | null {
    const cached = this.files.get(relative);
    if (cached) return cached;
    const path = join(BUILD, relative);
    if (!existsSync(path)) return null;
    const body = readFileSync(path);
    this.files.set(relative, body);
    return body;
  }
}

/** The console's security headers (no inline code, no framing: consoleSecurityHeaders) with the answer's caching. */
function secured(reply: FastifyReply, cacheControl: string): FastifyReply {
  for (const [name, value] of Object.entries(consoleSecurityHeaders(cacheControl))) reply.header(name, value);
  return reply;
}
