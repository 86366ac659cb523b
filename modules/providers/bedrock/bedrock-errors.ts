import { type ErrorClass, ProviderError, firstHeader } from '../../canonical/index.js';
import { classifyHttpStatus, httpError, providerText } from '../upstream-errors.js';

/** AWS names the request id `x-amzn-requestid` (S3-style services `x-amz-request-id`). */
export const BEDROCK_REQUEST_ID_HEADERS = ['x-amzn-requestid', 'x-amz-request-id'];

const CONTEXT_LENGTH = /too long|too many (input )?tokens|context (length|window)|maximum (context|input|prompt)|exceeds? the (maximum|limit)|input length/i;

/**
 * Bedrock names its errors by type (the `x-amzn-errortype` header or `__type` of an HTTP error; the
 * `:exception-type` header of an exception frame inside a stream). The type decides; the status is
 * the fallback for types this map does not know.
 */
export function classifyBedrockError(errorType: string | null, status: number | null, message: string): ErrorClass {
  switch (normalizeType(errorType)) {
    case 'throttling':
    case 'servicequotaexceeded':
    case 'toomanyrequests':
      return 'rate_limited';
    case 'serviceunavailable':
    case 'modelnotready':
      return 'overloaded';
    case 'accessdenied':
    case 'unrecognizedclient':
    case 'invalidsignature':
    case 'expiredtoken':
    case 'incompletesignature':
    case 'missingauthenticationtoken':
      return 'auth';
    case 'validation':
      return CONTEXT_LENGTH.test(message) ? 'context_length' : 'invalid_request';
    case 'modeltimeout':
      return 'timeout';
    case 'internalserver':
    case 'modelstreamerror':
    case 'modelerror':
      return 'transient';
    case 'resourcenotfound':
      return 'invalid_request';
    default:
      break;
  }
  if (status === null) return 'transient';
  if (status === 400 && CONTEXT_LENGTH.test(message)) return 'context_length';
  return classifyHttpStatus(status);
}

/** An HTTP error answer (status ≥ 400) → ProviderError with a sanitised message. */
export function bedrockHttpError(status: number, headers: Record<string, string | string[] | undefined>, text: string): ProviderError {
  let message = '';
  let bodyType: string | null = null;
  try {
    const parsed = JSON.parse(text) as { message?: unknown; Message?: unknown; __type?: unknown };
    const candidate = parsed.message ?? parsed.Message;
    message = typeof candidate === 'string' ? candidate : '';
    bodyType = typeof parsed.__type === 'string' ? parsed.__type : null;
  } catch {
    message = ''; // a non-JSON body (an HTML error page from a proxy) is not passed on
  }
  const errorType = firstHeader(headers['x-amzn-errortype']) || bodyType;
  const errorClass = classifyBedrockError(errorType, status, message);
  const detail = [typeName(errorType), message].filter(Boolean).join(': ') || null;
  return httpError(status, headers, errorClass, detail, BEDROCK_REQUEST_ID_HEADERS);
}

/** An exception frame inside a 200 ConverseStream: never a clean stop. */
export function bedrockStreamException(exceptionType: string, body: string): ProviderError {
  let message = '';
  try {
    const parsed = JSON.parse(body) as { message?: unknown; Message?: unknown };
    const candidate = parsed.message ?? parsed.Message;
    message = typeof candidate === 'string' ? candidate : '';
  } catch {
    message = '';
  }
  const errorClass = classifyBedrockError(exceptionType, null, message);
  return new ProviderError(errorClass, 'the provider reported an error inside the stream', null, null, {
    providerMessage: providerText([exceptionType, message].filter(Boolean).join(': ')),
  });
}

/** `ValidationException:http://internal.amazon.com/…` or `com.amazon…#ThrottlingException` → `validation` / `throttling`. */
function normalizeType(errorType: string | null): string {
  return typeName(errorType).toLowerCase().replace(/exception$/, '');
}

function typeName(errorType: string | null): string {
  if (!errorType) return '';
  return errorType.split(':')[0].split('#').pop() ?? '';
}
