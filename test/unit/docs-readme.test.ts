import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * The README is the front door (issue 33): short enough to read in five minutes, and enough to start the
 * gateway, make a call and point an official SDK at it. `.ci/run` runs the README's test command.
 */
const readme = readFileSync(fileURLToPath(new URL('../../../README.md', import.meta.url)), 'utf8');

test('README.md is at most 200 lines', () => {
  expect(readme.split('\n').length).toBeLessThanOrEqual(200);
});

test('README.md gives the two commands: start and test', () => {
  expect(readme).toMatch(/^npm install && npm start\b/m);
  expect(readme).toMatch(/^npm test\b/m);
});

test('README.md makes a first call with curl and the demo key', () => {
  expect(readme).toContain('curl http://127.0.0.1:8080/v1/chat/completions');
  expect(readme).toContain('Authorization: Bearer $(cat .switchyard/secrets/demo-key)');
  expect(readme).toContain('"model":"demo"');
});

test("README.md gives both SDKs' base URLs: openai with /v1, @anthropic-ai/sdk without", () => {
  expect(readme).toContain("import OpenAI from 'openai'");
  expect(readme).toContain("baseURL: 'http://127.0.0.1:8080/v1'");
  expect(readme).toContain("import Anthropic from '@anthropic-ai/sdk'");
  const anthropic = /new Anthropic\(\{ baseURL: '([^']+)'/.exec(readme);
  expect(anthropic?.[1]).toBe('http://127.0.0.1:8080');
});

test('README.md maps the docs: it links their table of contents', () => {
  expect(readme).toContain('(docs/README.md)');
});
