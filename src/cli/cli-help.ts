import { type CliCommand, type CliFlag, cliCommands } from './cli-commands.js';

/** The column descriptions start at, and the width help text is wrapped to (a terminal of 110 columns). */
const DESCRIPTION_COLUMN = 37;
const WIDTH = 110;

/** `--file FILE`, `-f, --file FILE` in the flag list. */
export function flagForm(flag: CliFlag, withShort = false): string {
  const long = `--${flag.name}${flag.value ? ` ${flag.value}` : ''}`;
  return withShort && flag.short ? `-${flag.short}, ${long}` : long;
}

/** How the synopsis writes one flag: required bare, optional in brackets, repeatable with `...`. */
function synopsisFlag(flag: CliFlag): string {
  const form = flag.short ? `-${flag.short}${flag.value ? ` ${flag.value}` : ''}` : flagForm(flag);
  if (flag.required) return flag.multiple ? `${form} [${flagForm(flag)} ...]` : form;
  return flag.multiple ? `[${form} ...]` : `[${form}]`;
}

/** The command's words, arguments and flags, as pieces the synopsis is wrapped from (alternatives stay together). */
export function synopsisPieces(words: readonly string[], command: CliCommand): string[] {
  const pieces = [...words, ...(command.arguments ? [command.arguments] : [])];
  const grouped = new Set<string>();
  for (const flag of command.flags) {
    if (flag.group === undefined) {
      pieces.push(synopsisFlag(flag));
    } else if (!grouped.has(flag.group)) {
      grouped.add(flag.group);
      pieces.push(command.flags.filter((f) => f.group === flag.group).map((f) => flagForm(f)).join(' | '));
    }
  }
  return pieces;
}

/** Words wrapped to `width`, every line after the first indented by `indent`. */
function wrap(pieces: readonly string[], width: number, firstIndent: number, indent: number): string[] {
  const lines: string[] = [];
  let line = ' '.repeat(firstIndent);
  let start = true;
  for (const piece of pieces) {
    if (!start && line.length + 1 + piece.length > width) {
      lines.push(line);
      line = ' '.repeat(indent) + piece;
    } else {
      line += (start ? '' : ' ') + piece;
    }
    start = false;
  }
  lines.push(line);
  return lines;
}

/** One command's entry in the overview: the synopsis, and the description at its column (beside a short synopsis). */
function entry(words: readonly string[], command: CliCommand): string {
  const synopsis = wrap(synopsisPieces(words, command), WIDTH - 4, 2, 2 + words.join(' ').length + 1);
  const description = wrap(command.description.split(' '), WIDTH, DESCRIPTION_COLUMN, DESCRIPTION_COLUMN);
  const last = synopsis[synopsis.length - 1];
  if (synopsis.length === 1 && last.length < DESCRIPTION_COLUMN - 1) {
    description[0] = last.padEnd(DESCRIPTION_COLUMN) + description[0].trimStart();
    return `${description.join('\n')}\n`;
  }
  return `${[...synopsis, ...description].join('\n')}\n`;
}

/** `switchyard help`: every command. */
export function cliOverview(): string {
  const entries = cliCommands().map(({ words, command }) => entry(words, command)).join('');
  return `Usage: switchyard <command>\n\n${entries}\n  switchyard <command> --help explains a command's flags; switchyard --version prints the version.\n`;
}

/** The flags of one command, one per line, with their defaults. */
function flagList(command: CliCommand): string {
  if (command.flags.length === 0) return '';
  const forms = command.flags.map((flag) => `    ${flagForm(flag, true)}`);
  const column = Math.max(...forms.map((form) => form.length)) + 2;
  const lines = command.flags.map((flag, i) => {
    const meaning = `${flag.meaning}${flagNotes(command, flag)}`;
    const wrapped = wrap(meaning.split(' '), WIDTH, column, column);
    wrapped[0] = forms[i].padEnd(column) + wrapped[0].trimStart();
    return wrapped.join('\n');
  });
  return `\n${lines.join('\n')}\n`;
}

/** What the synopsis says of a flag, in words: required, repeatable, one of a group, its default. */
export function flagNotes(command: CliCommand, flag: CliFlag): string {
  const notes: string[] = [];
  if (flag.required) notes.push('required');
  if (flag.group !== undefined) notes.push(`exactly one of ${command.flags.filter((f) => f.group === flag.group).map((f) => `--${f.name}`).join(', ')}`);
  if (flag.multiple) notes.push('repeatable');
  if (flag.default !== undefined) notes.push(`default ${flag.default}`);
  return notes.length ? ` (${notes.join('; ')})` : '';
}

/**
 * `switchyard <command> [sub] --help`: the entries of that command (of the subcommand when one is named),
 * each with its flags; null when no command has those words.
 */
export function cliCommandHelp(words: readonly string[]): string | null {
  const all = cliCommands();
  const exact = all.filter((c) => words.every((word, index) => c.words[index] === word));
  const chosen = exact.length > 0 ? exact : all.filter((c) => c.words[0] === words[0]);
  if (chosen.length === 0) return null;
  return `Usage: switchyard …\n\n${chosen.map(({ words: w, command }) => `${entry(w, command)}${flagList(command)}`).join('\n')}`;
}
