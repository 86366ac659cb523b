import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';
import { AbortScope } from '../../src/kernel/index.js';

describe('AbortScope', () => {
  it('starts unaborted, and aborts once: the first reason stays and listeners hear it once', () => {
    const scope = new AbortScope();
    const heard: unknown[] = [];
    scope.signal.addEventListener('abort', () => heard.push(scope.signal.reason), { once: true });
    scope.signal.addEventListener('abort', () => heard.push('persistent'));
    expect(scope.signal.aborted).toBe(false);
    expect(() => scope.signal.throwIfAborted()).not.toThrow();
    const first = new Error('first');
    scope.abort(first);
    scope.abort(new Error('second'));
    expect(scope.signal.aborted).toBe(true);
    expect(scope.signal.reason).toBe(first);
    expect(heard).toEqual([first, 'persistent']);
    expect(() => scope.signal.throwIfAborted()).toThrow(first);
  });

  it('gives an AbortError DOMException as the reason when none is given, as Node does', () => {
    const scope = new AbortScope();
    scope.abort();
    expect(scope.signal.reason).toBeInstanceOf(DOMException);
    expect((scope.signal.reason as DOMException).name).toBe('AbortError');
  });

  it('does not call a listener that was removed, and calls onabort', () => {
    const scope = new AbortScope();
    const calls: string[] = [];
    const listener = () => calls.push('listener');
    const onabort = () => calls.push('onabort');
    scope.signal.addEventListener('abort', listener);
    scope.signal.removeEventListener('abort', listener);
    scope.signal.onabort = onabort;
    scope.abort('why');
    expect(calls).toEqual(['onabort']);
  });

  it('follows a parent with its reason until disposed, starts aborted under an aborted parent, and never aborts the parent', () => {
    const parent = new AbortScope();
    const attempt = new AbortScope(parent.signal);
    const reason = new Error('client left');
    parent.abort(reason);
    expect(attempt.signal.aborted).toBe(true);
    expect(attempt.signal.reason).toBe(reason);

    const other = new AbortScope();
    const disposed = new AbortScope(other.signal);
    disposed.dispose();
    other.abort(new Error('late'));
    expect(disposed.signal.aborted).toBe(false);

    expect(new AbortScope(parent.signal).signal.reason).toBe(reason);
    const root = new AbortScope();
    new AbortScope(root.signal).abort(new Error('attempt deadline'));
    expect(root.signal.aborted).toBe(false);
  });

  describe('as the signal of an undici request', () => {
    let server: Server;
    let pool: Pool;
    beforeAll(async () => {
      // Answers headers only for /fast; /hang never answers, so only an abort ends it.
      server = createServer((req, res) => {
        if (req.url === '/fast') res.end('ok');
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      pool = new Pool(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    });
    afterAll(async () => {
      await pool.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    });

    it('aborts a request in flight with the scope reason', async () => {
      const scope = new AbortScope();
      const pending = pool.request({ path: '/hang', method: 'GET', signal: scope.signal });
      const reason = new Error('deadline');
      setTimeout(() => scope.abort(reason), 20);
      await expect(pending).rejects.toBe(reason);
    });

    it('refuses to start a request whose scope has already aborted', async () => {
      const scope = new AbortScope();
      const reason = new Error('gone');
      scope.abort(reason);
      await expect(pool.request({ path: '/fast', method: 'GET', signal: scope.signal })).rejects.toBe(reason);
    });

    it('lets a request that is not aborted complete', async () => {
      const scope = new AbortScope();
      const response = await pool.request({ path: '/fast', method: 'GET', signal: scope.signal });
      expect(await response.body.text()).toBe('ok');
    });
  });
});
