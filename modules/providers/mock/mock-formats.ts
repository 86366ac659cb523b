import { anthropicMockFormat } from './anthropic-mock-format.js';
import { bedrockMockFormat } from './bedrock-mock-format.js';
import { geminiMockFormat } from './gemini-mock-format.js';
import type { MockFormat } from './mock-format.js';
import { openAiMockFormat } from './openai-mock-format.js';

/** Every provider wire format the mock speaks; the server picks one by method and path. */
export const MOCK_FORMATS: MockFormat[] = [openAiMockFormat, anthropicMockFormat, geminiMockFormat, bedrockMockFormat];
