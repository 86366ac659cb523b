import { page, sentence, table } from '../config/reference/markdown.js';
import { cliCommands } from './cli-commands.js';
import { flagForm, flagNotes, synopsisPieces } from './cli-help.js';

/** docs/reference/cli.md: every command with its synopsis, description and flags, from the table `switchyard help` prints. */
export function renderCliReference(): string {
  return page({
    title: 'CLI',
    source: "the CLI's command table (`src/cli/cli-commands.ts`), the same one `switchyard help` and `switchyard <command> --help` print",
    intro:
      'Run it as `npx switchyard <command>` in a checkout, or `node bin/switchyard.js <command>`; `switchyard` with no command prints the overview of its commands; `switchyard serve` (what `npm start` runs) starts the gateway. ' +
      'The commands read the same environment as the gateway (see [environment.md](environment.md)). ' +
      'Exit codes: 0 success, 1 a failure the command reports on stderr, 2 a usage error (the overview follows it).',
    sections: cliCommands().map(({ words, command }) => {
      const synopsis = `\`\`\`\nswitchyard ${synopsisPieces(words, command).join(' ')}\n\`\`\``;
      const flags = command.flags.length
        ? `\n\n${table(['flag', 'meaning'], command.flags.map((flag) => [`\`${flagForm(flag, true)}\``, `${flag.meaning}${flagNotes(command, flag)}`]))}`
        : '';
      const runs = command.serving ? ' Runs until stopped.' : '';
      return {
        heading: `switchyard ${words.join(' ')}`,
        summary: sentence(command.description),
        body: `${synopsis}\n\n${sentence(command.description)}.${runs}${flags}`,
      };
    }),
  });
}
