/**
 * An XLSX upload checked for what it inflates to before anything parses it (ASVS 4 12.1.2, OWASP
 * File Upload Cheat Sheet): an XLSX is a ZIP, and its sheet can inflate a thousandfold.
 *
 * - `checkXlsxDeclared` reads the ZIP's central directory only (yauzl): more than
 *   MAX_XLSX_ENTRIES entries, an entry whose declared uncompressed size — or a total of them —
 *   over the limit is refused. Cheap: the upload route runs it and answers 413 at once.
 * - `checkXlsxInflation` (the import job, before the parser) also inflates every entry, counting
 *   bytes: yauzl stops an entry whose data inflates past its declared size (a ZIP that lies in
 *   its directory), so what the parser will meet is bounded by the declared sizes just checked.
 *   And the entries must tile the file: local entries outside the central directory (which a
 *   streaming reader such as ExcelJS's would read, but a directory check would not see) are
 *   refused.
 */
import { once } from 'node:events';
import yauzl, { type Entry, type ZipFile } from 'yauzl';
import { MAX_XLSX_ENTRIES } from './policy.ts';
import { UnreadableFileError } from './read.ts';
import type { ReasonKey } from '../reasons.ts';

/** The file is refused for what it is, with the reason key HR reads (reasons.ts). */
export class FileRefusedError extends UnreadableFileError {
  constructor(
    readonly reason: ReasonKey,
    message: string,
  ) {
    super(message);
  }
}

const MB = (n: number) => `${(n / 1024 / 1024).toFixed(0)} MB`;

function open(content: Uint8Array): Promise<ZipFile> {
  return new Promise((resolve, reject) =>
    yauzl.fromBuffer(Buffer.from(content.buffer, content.byteOffset, content.byteLength), { lazyEntries: true, validateEntrySizes: true }, (error, zip) =>
      error ? reject(new UnreadableFileError(`XLSX: not a readable ZIP (${error.message})`)) : resolve(zip),
    ),
  );
}

/** Every entry of the central directory, checked against the limit as it is read. */
async function entriesWithin(zip: ZipFile, maxInflatedBytes: number): Promise<Entry[]> {
  if (zip.entryCount > MAX_XLSX_ENTRIES)
    throw new FileRefusedError('file.inflatesTooMuch', `XLSX: ${zip.entryCount} entries in the ZIP (at most ${MAX_XLSX_ENTRIES})`);
  const entries: Entry[] = [];
  let total = 0;
  const done = new Promise<void>((resolve, reject) => {
    zip.on('entry', (entry: Entry) => {
      total += entry.uncompressedSize;
      if (entry.uncompressedSize > maxInflatedBytes || total > maxInflatedBytes) {
        zip.close();
        reject(
          new FileRefusedError(
            'file.inflatesTooMuch',
            `XLSX: ${entry.uncompressedSize > maxInflatedBytes ? `${entry.fileName} unpacks to ${MB(entry.uncompressedSize)}` : `its entries unpack to more than ${MB(total)}`} (at most ${MB(maxInflatedBytes)})`,
          ),
        );
        return;
      }
      entries.push(entry);
      zip.readEntry();
    });
    zip.on('end', () => resolve());
    zip.on('error', (error: Error) => reject(new UnreadableFileError(`XLSX: ${error.message}`)));
  });
  zip.readEntry();
  await done;
  return entries;
}

/** The central directory's sizes within the limit (no entry is inflated). */
export async function checkXlsxDeclared(content: Uint8Array, maxInflatedBytes: number): Promise<void> {
  const zip = await open(content);
  try {
    await entriesWithin(zip, maxInflatedBytes);
  } finally {
    zip.close();
  }
}

/** The declared sizes within the limit, every entry inflating to exactly its declared size, and no local entry outside the directory. */
export async function checkXlsxInflation(content: Uint8Array, maxInflatedBytes: number, signal?: AbortSignal): Promise<void> {
  const zip = await open(content);
  try {
    const entries = await entriesWithin(zip, maxInflatedBytes);
    checkTiling(Buffer.from(content.buffer, content.byteOffset, content.byteLength), entries);
    for (const entry of entries) {
      signal?.throwIfAborted();
      if (entry.fileName.endsWith('/')) continue;
      const stream = await new Promise<NodeJS.ReadableStream>((resolve, reject) =>
        zip.openReadStream(entry, (error, s) => (error ? reject(new UnreadableFileError(`XLSX: ${entry.fileName}: ${error.message}`)) : resolve(s))),
      );
      let inflated = 0;
      try {
        for await (const chunk of stream as AsyncIterable<Buffer>) inflated += chunk.length; // yauzl errors past the declared size
      } catch (error) {
        throw new FileRefusedError(
          'file.inflatesTooMuch',
          `XLSX: ${entry.fileName} does not inflate to the size its directory declares (${(error as Error).message})`,
        );
      }
      if (inflated !== entry.uncompressedSize)
        throw new FileRefusedError('file.inflatesTooMuch', `XLSX: ${entry.fileName} inflated to ${inflated} bytes, ${entry.uncompressedSize} declared`);
    }
  } finally {
    zip.close();
    if (zip.isOpen) await once(zip, 'close').catch(() => {});
  }
}

/**
 * The local entries, in file order, lie end to end from the file's start to the central
 * directory: nothing a streaming reader would find is missing from the directory.
 */
function checkTiling(file: Buffer, entries: Entry[]): void {
  const eocd = file.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  if (eocd < 0 || eocd + 22 > file.length) throw new UnreadableFileError('XLSX: no end of central directory');
  const directory = file.readUInt32LE(eocd + 16);
  let at = 0;
  for (const entry of [...entries].sort((a, b) => a.relativeOffsetOfLocalHeader - b.relativeOffsetOfLocalHeader)) {
    if (entry.relativeOffsetOfLocalHeader !== at || file.readUInt32LE(at) !== 0x04034b50)
      throw new FileRefusedError('file.inflatesTooMuch', `XLSX: data at byte ${at} that the ZIP's directory does not list`);
    at += 30 + file.readUInt16LE(at + 26) + file.readUInt16LE(at + 28) + entry.compressedSize;
    if (entry.generalPurposeBitFlag & 8) {
      // A data descriptor: optional signature, CRC, sizes (ZIP32).
      at += file.readUInt32LE(at) === 0x08074b50 ? 16 : 12;
    }
  }
  if (at !== directory) throw new FileRefusedError('file.inflatesTooMuch', `XLSX: data at byte ${at} that the ZIP's directory does not list`);
}
