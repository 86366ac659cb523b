import { CONFIGURATION_EXAMPLE } from '../configuration-example.js';
import { type ConfigField, type ConfigFields, GATEWAY_CONFIG_FIELDS } from '../gateway-config-schema.js';
import { page, sentence, table } from './markdown.js';

/** Every field below a mapping, depth first, with its path from there (`price.inputPer1M`, `routes[].deployment`). */
export function fieldPaths(fields: ConfigFields, prefix = ''): Array<{ path: string; field: ConfigField }> {
  return Object.entries(fields).flatMap(([name, field]) => {
    const path = `${prefix}${name}`;
    const nested = field.fields ? fieldPaths(field.fields, `${path}${field.list ? '[]' : ''}.`) : [];
    return [{ path, field }, ...nested];
  });
}

function fieldTable(fields: ConfigFields): string {
  return table(
    ['field', 'type', 'required', 'default', 'meaning'],
    fieldPaths(fields).map(({ path, field }) => [`\`${path}\``, field.type, field.required ? 'yes' : '', field.default ?? '', field.meaning]),
  );
}

/** docs/reference/configuration.md: every field of the configuration file, from the schema the validator uses. */
export function renderConfigurationReference(): string {
  return page({
    title: 'Configuration file',
    source: 'the schema the validator uses (`src/config/gateway-config-schema.ts`)',
    intro:
      'The file named by `SWITCHYARD_CONFIG` (default `./switchyard.yaml` if present, else the built-in demo) is YAML with six top-level lists, each optional. ' +
      '`switchyard apply -f FILE` and `serve` at start make it true by appending only the events needed. A field not listed here is refused ' +
      '(`unknown field (expected one of …)`), every problem is reported with its path, and nothing is applied until the file is valid. ' +
      "Ids and names referred to (a deployment's `provider`, a route's `deployment`, a key's `tenant`) must be declared in the same file. " +
      'Secrets are references (`env:NAME`, `file:PATH`, bounded by `SWITCHYARD_SECRET_ENV` and `SWITCHYARD_SECRETS_DIR`), never literals. ' +
      'A nested field is written with its path: `price.inputPer1M` is `inputPer1M` inside `price`, `routes[].deployment` is `deployment` in each item of `routes`.',
    sections: [
      ...Object.entries(GATEWAY_CONFIG_FIELDS).map(([name, field]) => ({
        heading: name,
        summary: sentence(field.meaning),
        body: `${sentence(field.meaning)}. Each item of \`${name}\`:\n\n${fieldTable(field.fields ?? {})}`,
      })),
      {
        heading: 'Example',
        summary: 'A file that uses every field at least once',
        body: `A file that uses every field above at least once (the test suite applies it, so it stays valid):\n\n\`\`\`yaml\n${CONFIGURATION_EXAMPLE}\`\`\``,
      },
    ],
  });
}
