import { TAX_FORM_MAX_BYTES } from '@affiliate-attribution/contract';

/** The JSON body of an upload: the document's base64 (4/3 of its bytes) and a little more for the other fields. */
export const TAX_FORM_BODY_LIMIT_BYTES = Math.ceil(TAX_FORM_MAX_BYTES / 3) * 4 + 64 * 1024;

/**
 * What a tax form's bytes are, by their first bytes (never by the file name or a declared type,
 * which the uploader chooses): a PDF (`%PDF-`, ISO 32000-1 §7.5.2), a PNG (its 8-byte signature,
 * RFC 2083 §3.1) or a JPEG (SOI marker FF D8 then a marker FF). Anything else is refused.
 */
export type DocumentType = 'application/pdf' | 'image/png' | 'image/jpeg';

const SIGNATURES: { type: DocumentType; bytes: number[] }[] = [
  { type: 'application/pdf', bytes: [0x25, 0x50, 0x44, 0x46, 0x2d] },
  { type: 'image/png', bytes: [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a] },
  { type: 'image/jpeg', bytes: [0xff, 0xd8, 0xff] },
];

export function documentTypeOf(document: Buffer): DocumentType | undefined {
  return SIGNATURES.find(({ bytes }) => document.length >= bytes.length && bytes.every((b, i) => document[i] === b))
    ?.type;
}

/** Strict base64 (the standard alphabet, padded), so that a garbled upload is refused rather than half decoded. */
export function decodeBase64(text: string): Buffer | undefined {
  const compact = text.replace(/\s+/g, '');
  if (compact.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(compact)) return undefined;
  return Buffer.from(compact, 'base64');
}

/** A file name safe in a Content-Disposition header: its ASCII fallback and its RFC 6266 / RFC 8187 UTF-8 form. */
export function contentDisposition(fileName: string): string {
  const fallback = fileName.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encodeURIComponent(fileName)}`;
}
