/**
 * A progress bar on stderr: redrawn in place on a terminal, a line per tenth otherwise (CI logs), so
 * stdout stays clean for whatever the command prints as its result.
 */
export class ProgressBar {
  private readonly started = Date.now();
  private lastTenth = -1;
  private drawn = false;

  constructor(
    private readonly label: string,
    private readonly unit: string,
    private readonly stream: NodeJS.WriteStream = process.stderr,
  ) {}

  update(done: number, total: number): void {
    const ratio = total > 0 ? Math.min(1, done / total) : 1;
    const seconds = Math.max(0.001, (Date.now() - this.started) / 1000);
    const text = `${this.label} [${'#'.repeat(Math.round(ratio * 30)).padEnd(30, '-')}] ${(ratio * 100).toFixed(0).padStart(3)}%  ` +
      `${done.toLocaleString('en-US')}/${total.toLocaleString('en-US')} ${this.unit}  ${Math.round(done / seconds).toLocaleString('en-US')}/s`;
    if (this.stream.isTTY) {
      this.stream.write(`\r${text}\u001b[K`);
      this.drawn = true;
      return;
    }
    const tenth = Math.floor(ratio * 10);
    if (tenth !== this.lastTenth) {
      this.lastTenth = tenth;
      this.stream.write(`${text}\n`);
    }
  }

  finish(message: string): void {
    if (this.drawn) this.stream.write('\n');
    this.stream.write(`${message}\n`);
  }
}
