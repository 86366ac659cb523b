import { NODE_FLAGS, SERVING_ENV } from '../../cli/serving-flags.js';
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
  const flags = NODE_FLAGS.map((flag) => `\`${flag}\``).join(', ');
  const environment = Object.entries(SERVING_ENV).map(([name, value]) => `${name}=${value}`).join(' ');
  // Next to the allocator variables: the same processes, the same reason (memory and CPU of the request path).
  const allocator = ENVIRONMENT_SETTINGS.findIndex(({ settings }) => settings.some((setting) => setting.name in SERVING_ENV));
  sections.splice(allocator + 1, 0, {
    heading: 'Node flags of serving processes',
    summary: 'The V8 flags `npm start` passes, and how to pass them otherwise',
    body:
      `Serving processes start with ${flags}: \`npm start\` passes them, and cluster workers (SWITCHYARD_WORKERS) inherit them ` +
      '(why each one, with measurements: `src/cli/serving-flags.ts`). Started any other way (a container, a process manager), put them on node\'s command line, ' +
      'with the allocator variables above in the environment:\n\n' +
      `\`\`\`\n${environment} node ${NODE_FLAGS.join(' ')} bin/switchyard.js serve\n\`\`\`\n\n` +
      'Node accepts the first in NODE_OPTIONS too, but refuses the other two there.',
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
