import { PDFArray, PDFDict, PDFDocument, PDFHexString, PDFStream, PDFString, type PDFObject } from '@cantoo/pdf-lib';

/**
 * Password-protected slips (issue 22): a separate step after rendering, so the normal render
 * path is unchanged and unencrypted slips cost nothing more.
 *
 * AES-256 (ISO 32000-2 standard security handler, revision 6, `@cantoo/pdf-lib`'s `encrypt()`):
 * a reader asks for the password before it shows anything. Printing is allowed; the owner
 * password is random and never kept, so the protection cannot be lifted, only the slip opened.
 *
 * `@cantoo/pdf-lib` 2.11.1 encrypts streams only: strings outside streams (the document's
 * Title, which names the employee, its Author, /Lang, ...) would be written in clear, and a
 * conforming reader then fails to decrypt them ("invalid string length for aes encryption" in
 * MuPDF). `encryptStrings` encrypts them first with the library's own per-object cipher.
 */
export async function encryptPdf(pdf: Uint8Array, userPassword: string): Promise<Uint8Array> {
  if (!userPassword) throw new Error('encryptPdf: an empty password protects nothing');
  const doc = await PDFDocument.load(pdf, { updateMetadata: false });
  const ownerPassword = Buffer.from(crypto.getRandomValues(new Uint8Array(24))).toString('base64url');
  doc.encrypt({ userPassword, ownerPassword, permissions: { printing: 'highResolution' }, algorithm: 'AES-256' });
  encryptStrings(doc);
  return doc.save({ useObjectStreams: false, updateFieldAppearances: false });
}

/** Every string of every indirect object (and stream dictionary), except the encryption dictionary's own, encrypted. */
function encryptStrings(doc: PDFDocument): void {
  const { context } = doc;
  const security = context.security;
  if (!security) throw new Error('encryptStrings: call encrypt() first');
  const encryptDict = context.trailerInfo.Encrypt;
  for (const [ref, object] of context.enumerateIndirectObjects()) {
    if (ref === encryptDict) continue;
    const encrypt = security.getEncryptFn(ref.objectNumber, ref.generationNumber);
    const replace = (value: PDFObject): PDFObject | undefined => {
      if (value instanceof PDFString || value instanceof PDFHexString) return PDFHexString.of(Buffer.from(encrypt(value.asBytes())).toString('hex'));
      walk(value);
      return undefined;
    };
    const walk = (value: PDFObject): void => {
      if (value instanceof PDFDict) {
        for (const [key, item] of value.entries()) {
          const next = replace(item);
          if (next) value.set(key, next);
        }
      } else if (value instanceof PDFArray) {
        for (let i = 0; i < value.size(); i++) {
          const next = replace(value.get(i));
          if (next) value.set(i, next);
        }
      }
    };
    walk(object instanceof PDFStream ? object.dict : object);
  }
}
