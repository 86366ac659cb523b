import { type ChildProcess, fork } from 'node:child_process';

/** A forked helper process (mock provider, load generator, bare proxy) answering requests over IPC. */
export class HelperProcess {
  private sequence = 0;
  private readonly waiting = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  private readonly listeners = new Map<string, (payload: unknown) => void>();

  private constructor(readonly child: ChildProcess) {
    child.on('message', (message: Envelope) => {
      if (message.reply !== undefined) {
        const waiter = this.waiting.get(message.reply);
        this.waiting.delete(message.reply);
        if (message.error !== undefined) waiter?.reject(new Error(message.error));
        else waiter?.resolve(message.result);
      } else if (message.event) this.listeners.get(message.event)?.(message.payload);
    });
    child.once('exit', (code, signal) => {
      for (const waiter of this.waiting.values()) waiter.reject(new Error(`helper process exited (${signal ?? code})`));
      this.waiting.clear();
    });
  }

  /** Forks `module` and resolves once it announced `ready` (with whatever it reported, e.g. its URL). */
  static async start<T>(module: string, args: string[] = []): Promise<{ helper: HelperProcess; ready: T }> {
    const child = fork(module, args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execArgv: [] });
    const helper = new HelperProcess(child);
    const ready = await new Promise<T>((resolve, reject) => {
      helper.on('ready', (payload) => resolve(payload as T));
      child.once('exit', (code) => reject(new Error(`${module} exited with ${code} before it was ready`)));
      child.once('error', reject);
    });
    return { helper, ready };
  }

  get pid(): number {
    return this.child.pid!;
  }

  call<T>(type: string, payload: unknown = {}): Promise<T> {
    const id = ++this.sequence;
    return new Promise<T>((resolve, reject) => {
      this.waiting.set(id, { resolve: resolve as (value: unknown) => void, reject });
      this.child.send({ id, type, payload });
    });
  }

  on(event: string, listener: (payload: unknown) => void): void {
    this.listeners.set(event, listener);
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.kill('SIGTERM');
    await exited;
  }
}

interface Envelope {
  reply?: number;
  result?: unknown;
  error?: string;
  event?: string;
  payload?: unknown;
}

/** The helper's side: answers each request type with its handler, and reports events to the runner. */
export function answerRequests(handlers: Record<string, (payload: any) => Promise<unknown> | unknown>): void {
  process.on('message', (message: { id: number; type: string; payload: unknown }) => {
    const handler = handlers[message.type];
    Promise.resolve()
      .then(() => {
        if (!handler) throw new Error(`unknown request ${message.type}`);
        return handler(message.payload);
      })
      .then(
        (result) => process.send?.({ reply: message.id, result }),
        (error: Error) => process.send?.({ reply: message.id, error: error.message }),
      );
  });
  // The runner going away (even by SIGKILL) closes the channel: do not outlive it.
  process.on('disconnect', () => process.exit(0));
}

export function announce(event: string, payload: unknown = {}): void {
  process.send?.({ event, payload });
}
