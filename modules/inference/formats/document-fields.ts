import { type DocumentPart, invalidRequest, isBase64, MEDIA_TYPE } from '../../canonical/index.js';

/** `data:<media type>;base64,<data>`: how OpenAI's file parts (Chat `file.file_data`, Responses `input_file.file_data`) carry bytes. */
const DATA_URL = /^data:([^;,]+);base64,(.*)$/s;

/**
 * A file part's `file_data` → a base64 document source. The media type must be a `type/subtype`, the data
 * strict base64 (no whitespace: the same text goes to every provider, which would refuse it later, after
 * the request was admitted and billed for nothing).
 */
export function fileDataSource(value: unknown, param: string): Extract<DocumentPart['source'], { type: 'base64' }> {
  if (typeof value !== 'string') throw invalidRequest(`${param} must be a data URL (data:application/pdf;base64,...).`, param);
  const match = DATA_URL.exec(value);
  if (!match) throw invalidRequest(`${param} must be a data URL (data:application/pdf;base64,...).`, param);
  const mediaType = match[1].toLowerCase();
  if (!MEDIA_TYPE.test(mediaType)) throw invalidRequest(`${param} names no valid media type ('${match[1]}').`, param);
  if (!isBase64(match[2])) throw invalidRequest(`${param} is not valid base64 after 'base64,'.`, param);
  return { type: 'base64', mediaType, data: match[2] };
}

/** An optional string field of a document (filename, title, context); `max` characters at most. */
export function optionalDocumentString(value: unknown, param: string, max: number): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string' || value.length === 0 || value.length > max) throw invalidRequest(`${param} must be a non-empty string of at most ${max} characters.`, param);
  return value;
}

/** A reference (file id) field: a non-empty string without whitespace. */
export function fileIdOf(value: unknown, param: string): string {
  if (typeof value !== 'string' || !/^\S{1,256}$/.test(value)) throw invalidRequest(`${param} must be a file id (a non-empty string).`, param);
  return value;
}

/** An http(s) URL the provider fetches itself (the gateway never fetches it). */
export function documentUrlOf(value: unknown, param: string): string {
  if (typeof value !== 'string' || !/^https?:\/\/\S+$/i.test(value) || value.length > 8192) throw invalidRequest(`${param} must be an http(s) URL.`, param);
  return value;
}
