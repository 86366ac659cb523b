/** The canonical request/response model every client format and provider adapter translates to and from. */
export * from './chat-request.js';
export * from './chat-response.js';
export * from './context-length-exceeded.js';
export * from './document.js';
export * from './embeddings.js';
export * from './moderation.js';
export * from './gateway-error.js';
export * from './headers.js';
export * from './json-bounds.js';
export * from './provider-error.js';
export * from './token-estimate.js';
export * from './tokenizer.js';
export * from './tool-arguments.js';
export * from './thought-signature.js';
export * from './reported-usage.js';
