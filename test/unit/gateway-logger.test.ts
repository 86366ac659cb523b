import { GatewayLogger } from '../../src/gateway-logger.js';
import { logLevels } from '../../src/gateway.js';

function captured(level: 'log' | 'debug', write: (logger: GatewayLogger) => void): string {
  const chunks: string[] = [];
  const original = process.stdout.write.bind(process.stdout);
  process.stdout.write = ((chunk: string | Uint8Array) => {
    chunks.push(String(chunk));
    return true;
  }) as typeof process.stdout.write;
  try {
    write(new GatewayLogger(logLevels(level)));
  } finally {
    process.stdout.write = original;
  }
  return chunks.join('');
}

describe('GatewayLogger', () => {
  const frameworkLines = (logger: GatewayLogger) => {
    logger.log('Mapped {/v1/chat/completions, POST} route', 'RouterExplorer');
    logger.log('InferenceModule dependencies initialized', 'InstanceLoader');
    logger.log('applied built-in demo: 5 change(s)', 'Switchyard');
  };

  test('at LOG_LEVEL=log the framework start-up lines are dropped and the gateway\'s own kept', () => {
    const output = captured('log', frameworkLines);
    expect(output).not.toContain('Mapped {');
    expect(output).not.toContain('dependencies initialized');
    expect(output).toContain('applied built-in demo');
  });

  test('at LOG_LEVEL=debug they come back, as debug lines', () => {
    const output = captured('debug', frameworkLines);
    expect(output).toMatch(/DEBUG.*Mapped \{\/v1\/chat\/completions, POST\} route/);
    expect(output).toContain('dependencies initialized');
  });
});
