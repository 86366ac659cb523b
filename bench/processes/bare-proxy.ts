/**
 * The floor every gateway is compared with: the cheapest proxy Node can be. It reads the body, forwards
 * it to the upstream with one undici Pool and pipes the answer back as it arrives (SSE included). No
 * routing, no keys, no persistence.
 *
 *   node dist/bench/processes/bare-proxy.js --upstream http://127.0.0.1:9090 [--port 0]
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pipeline } from 'node:stream';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { announce } from './ipc.js';

const { values } = parseArgs({ options: { upstream: { type: 'string' }, port: { type: 'string', default: '0' } } });
if (!values.upstream) throw new Error('--upstream URL is required');
const upstream = new Pool(values.upstream, { pipelining: 1, keepAliveTimeout: 60_000, headersTimeout: 60_000, bodyTimeout: 60_000 });

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const headers: Record<string, string> = { 'content-type': req.headers['content-type'] ?? 'application/json' };
    if (req.headers.authorization) headers.authorization = req.headers.authorization;
    upstream.request({ path: req.url ?? '/', method: (req.method ?? 'POST') as 'POST', headers, body: Buffer.concat(chunks) }).then(
      (answer) => {
        const out: Record<string, string> = { 'content-type': String(answer.headers['content-type'] ?? 'application/json') };
        if (answer.headers['content-length']) out['content-length'] = String(answer.headers['content-length']);
        res.writeHead(answer.statusCode, out);
        pipeline(answer.body, res, () => undefined);
      },
      () => {
        if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json' });
        res.end('{"error":{"message":"upstream unreachable"}}');
      },
    );
  });
});
server.keepAliveTimeout = 65_000;
server.listen(Number(values.port), '127.0.0.1', () => {
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  if (process.send) announce('ready', { url });
  else process.stdout.write(`bare proxy on ${url} → ${values.upstream}\n`);
});
process.on('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
process.on('disconnect', () => process.exit(0));
