/**
 * An export's file in the database: written as a stream into parts of PART_BYTES, in order, by
 * the build job; read back part by part by the download. No process holds a whole file, and
 * any web replica can serve any export.
 */
import { createHash } from 'node:crypto';
import { Writable } from 'node:stream';
import type { Pool } from '../types.ts';

/** Bytes per stored part. */
export const PART_BYTES = 1024 * 1024;

/** A writable stream whose bytes become month_export_parts rows of one export. */
export class ExportPartWriter extends Writable {
  private buffered: Buffer[] = [];
  private bufferedBytes = 0;
  private seq = 0;
  private readonly hash = createHash('sha256');
  /** Bytes stored so far. */
  bytesStored = 0;

  constructor(
    private readonly pool: Pool,
    private readonly exportId: string,
    private readonly partBytes = PART_BYTES,
  ) {
    super();
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.buffered.push(chunk);
    this.bufferedBytes += chunk.length;
    this.hash.update(chunk);
    if (this.bufferedBytes < this.partBytes) return callback();
    this.flushParts(false).then(() => callback(), callback);
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.flushParts(true).then(() => callback(), callback);
  }

  /** The file's sha256 (hex), once the stream finished. */
  sha256(): string {
    return this.hash.copy().digest('hex');
  }

  private async flushParts(all: boolean): Promise<void> {
    let data = Buffer.concat(this.buffered);
    while (data.length >= this.partBytes || (all && data.length > 0)) {
      const part = data.subarray(0, this.partBytes);
      await this.pool.query(`insert into month_export_parts (export_id, seq, data) values ($1, $2, $3)`, [this.exportId, this.seq++, part]);
      this.bytesStored += part.length;
      data = data.subarray(part.length);
    }
    this.buffered = data.length ? [data] : [];
    this.bufferedBytes = data.length;
    this.emit('stored', this.bytesStored);
  }
}

/** The export's parts in order, one query per part (a download streams them). */
export async function* readExportParts(pool: Pick<Pool, 'query'>, exportId: string): AsyncGenerator<Buffer> {
  for (let seq = 0; ; seq++) {
    const { rows } = await pool.query<{ data: Buffer }>(`select data from month_export_parts where export_id = $1 and seq = $2`, [exportId, seq]);
    if (!rows[0]) return;
    yield rows[0].data;
  }
}
