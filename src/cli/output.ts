/**
 * Standard output of one-shot commands. Through a pipe, Node writes stdout asynchronously: a process that
 * exits right after its last write loses what is still queued (`events tail | head` used to print a
 * fraction of the log). Commands write through `writeOut`, which waits when the pipe is full, and the
 * process exits only once both streams have handed everything to the OS.
 */
export async function writeOut(text: string): Promise<void> {
  if (process.stdout.write(text)) return;
  await new Promise<void>((resolve) => {
    const done = () => {
      process.stdout.off('drain', done);
      process.stdout.off('close', done);
      resolve();
    };
    process.stdout.once('drain', done);
    process.stdout.once('close', done);
  });
}

/**
 * A reader that stops early (`head -n 5`) closes the pipe: further writes fail with EPIPE. That is the
 * reader's choice, not an error: the command ends quietly, with success.
 */
export function endQuietlyOnClosedPipe(): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EPIPE') process.exit(0);
      throw error;
    });
  }
}

/** Exits once stdout and stderr have written everything queued. */
export async function exitWhenFlushed(code: number): Promise<never> {
  await Promise.all([process.stdout, process.stderr].map((stream) => new Promise<void>((resolve) => {
    if (stream.destroyed || !stream.writable) return resolve();
    stream.write('', () => resolve());
  })));
  process.exit(code);
}
