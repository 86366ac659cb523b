import { ANTHROPIC_PARAMETERS } from '../anthropic/anthropic-parameters.js';
import { BEDROCK_PARAMETERS } from '../bedrock/bedrock-parameters.js';
import { GEMINI_PARAMETERS } from '../gemini/gemini-parameters.js';
import { AZURE_OPENAI_PARAMETERS, OPENAI_COMPATIBLE_PARAMETERS, OPENAI_PARAMETERS } from '../openai/openai-parameters.js';
import { ANTHROPIC_PARAMETER_NAMES, type ParameterRow, type ParameterTable, TABLE_PARAMETERS } from './parameter-table.js';

/** Every provider format's table, in the README's column order (`mock` uses OpenAI's). */
export const PARAMETER_TABLES: ReadonlyArray<readonly [string, ParameterTable]> = [
  ['openai, mock', OPENAI_PARAMETERS],
  ['azure-openai', AZURE_OPENAI_PARAMETERS],
  ['openai-compatible', OPENAI_COMPATIBLE_PARAMETERS],
  ['anthropic', ANTHROPIC_PARAMETERS],
  ['gemini', GEMINI_PARAMETERS],
  ['bedrock', BEDROCK_PARAMETERS],
];

const MARK: Readonly<Record<ParameterRow['handling'], string>> = { pass: 'pass', translate: 'translate', refuse: '—' };

/**
 * The tables as one Markdown table (the README embeds it; a unit test keeps the two equal). A cell says
 * pass, translate (with the wire field) or — (refused: routes of that format are ineligible).
 */
export function renderParameterTable(): string {
  const header = `| parameter (OpenAI name / Anthropic name) | ${PARAMETER_TABLES.map(([name]) => name).join(' | ')} |`;
  const rule = `|---|${PARAMETER_TABLES.map(() => '---').join('|')}|`;
  const rows = TABLE_PARAMETERS.map((parameter) => {
    const anthropicName = ANTHROPIC_PARAMETER_NAMES[parameter];
    const name = anthropicName ? `\`${parameter}\` / \`${anthropicName}\`` : `\`${parameter}\``;
    const cells = PARAMETER_TABLES.map(([, table]) => {
      const row = table[parameter];
      const conditional = row.honours ? '*' : '';
      return row.handling === 'translate' && row.wire ? `translate → \`${row.wire}\`${conditional}` : `${MARK[row.handling]}${conditional}`;
    });
    return `| ${name} | ${cells.join(' | ')} |`;
  });
  return [header, rule, ...rows].join('\n');
}
