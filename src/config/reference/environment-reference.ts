import { ENVIRONMENT_SETTINGS } from '../settings-registry.js';
import { page, table } from './markdown.js';

/** docs/reference/environment.md: every environment variable, grouped by the concept that reads it. */
export function renderEnvironmentReference(): string {
  const sections = ENVIRONMENT_SETTINGS.map(({ title, settings }) => {
    const owners = [...new Set(settings.map((setting) => `\`${setting.owner}\``))].join(', ');
    return {
      heading: title,
      summary: settings.map((setting) => `\`${setting.name}\``).join(', '),
      body: `Read by ${owners}.\n\n${table(['variable', 'type', 'default', 'meaning'], settings.map((setting) => [`\`${setting.name}\``, setting.type, setting.default, setting.meaning]))}`,
    };
  });
  const count = ENVIRONMENT_SETTINGS.reduce((sum, { settings }) => sum + settings.length, 0);
  return page({
    title: 'Environment settings',
    source: 'the settings declarations each concept keeps next to the code that reads them (`src/config/settings-registry.ts` lists them)',
    intro:
      `These are the ${count} environment variables Switchyard reads as settings (besides those an \`env:NAME\` secret reference names). An empty value counts as unset. ` +
      'A value the reader refuses stops the start with a message naming the variable. Each section is one concept and names where its code lives; ' +
      'the configuration file (`SWITCHYARD_CONFIG`) is described in [configuration.md](configuration.md).',
    sections,
  });
}
