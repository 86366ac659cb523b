import { PARAMETER_TABLES, renderParameterTable } from '../../../modules/providers/parameters/parameter-doc.js';
import { renderDocumentTable, TABLE_PARAMETERS } from '../../../modules/providers/index.js';
import { page, table } from './markdown.js';

const HANDLING: Readonly<Record<string, string>> = { pass: 'pass', translate: 'translate', refuse: '— (cannot honour)' };

/** docs/reference/parameters.md: the request parameters each provider format passes, translates or cannot honour. */
export function renderParametersReference(): string {
  const notes = PARAMETER_TABLES.map(([format, parameters]) => ({
    heading: `Notes: ${format}`,
    summary: `Each parameter's handling by the ${format} format, with its wire field and why`,
    body: table(
      ['parameter', 'handling', 'wire field', 'note'],
      TABLE_PARAMETERS.map((name) => {
        const row = parameters[name];
        return [`\`${name}\``, `${HANDLING[row.handling]}${row.honours ? ' *' : ''}`, row.wire ? `\`${row.wire}\`` : '', row.note];
      }),
    ),
  }));
  return page({
    title: 'Request parameters per provider format',
    source: "each provider format's declarative parameter table (`modules/providers/<format>/<format>-parameters.ts`)",
    intro:
      'Every client format accepts every parameter below. A route that cannot honour a parameter the request asks for (a non-default value) is ineligible, ' +
      'recorded on the attempt as `unsupported_parameter: <name>`; only when no route is left is the request refused with 400 `unsupported_parameter` naming it. ' +
      'Nothing is silently dropped. `pass`: sent as is; `translate → field`: sent as that field of the provider\'s wire format; `—`: cannot be honoured; ' +
      '`*`: also depends on the value or the deployment (see the notes). `translate` without a field: accepted but not sent, because the provider format has ' +
      'no field for it (the note says why that keeps its meaning); a request that asks for one is told so per request, in the `x-switchyard-unsent-parameters` ' +
      'response header and on the attempt (`AttemptFinished.unsentParameters`).',
    sections: [
      { heading: 'All provider formats', summary: 'One table: every parameter against every provider format', body: renderParameterTable() },
      {
        heading: 'Documents',
        summary: 'Which documents each provider format takes (the deployment must also declare the documents capability)',
        body:
          'A document (Anthropic `document` block, OpenAI `file` part, Responses `input_file`) goes only to a deployment that declares the `documents` capability, ' +
          'and only to a provider format that can take its kind; another route is ineligible (`unsupported_parameter: <field>`), and with none left the request is ' +
          'refused with 400 naming the field. `—`: cannot take it. Bedrock also needs a text block beside a document in its message (`documents[].text`).\n\n' +
          renderDocumentTable(),
      },
      ...notes,
    ],
  });
}
