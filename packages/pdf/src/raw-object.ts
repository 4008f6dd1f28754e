/**
 * A PDF object written as ready-made PDF syntax (Latin-1 text), for objects a slip has by the
 * tens (structure elements) or with hundreds of numbers (widths): building them as pdf-lib
 * dictionaries and arrays, one JavaScript object per name and number, cost more than the
 * rest of the page. The text is copied into the file as it is; the caller writes valid syntax.
 */
import { PDFObject } from 'pdf-lib';

export class PdfSyntax extends PDFObject {
  readonly #text: string;

  constructor(text: string) {
    super();
    this.#text = text;
  }

  override clone(): PdfSyntax {
    return new PdfSyntax(this.#text);
  }

  override toString(): string {
    return this.#text;
  }

  override sizeInBytes(): number {
    return this.#text.length;
  }

  override copyBytesInto(buffer: Uint8Array, offset: number): number {
    const text = this.#text;
    for (let i = 0; i < text.length; i++) buffer[offset + i] = text.charCodeAt(i);
    return text.length;
  }
}
