/** A plain text table: columns padded to their widest cell, numbers right-aligned. */
export function formatTable(header: string[], rows: Array<Array<string | number>>, { maxWidth = 60 } = {}): string[] {
  const cells = rows.map((r) => r.map((c) => (typeof c === 'number' ? c.toLocaleString('en-US') : clip(c, maxWidth))));
  const numeric = header.map((_, i) => rows.length > 0 && rows.every((r) => typeof r[i] === 'number'));
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]) =>
    r
      .map((c, i) => (numeric[i] ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(header), line(widths.map((w) => '─'.repeat(w))), ...cells.map(line)];
}

function clip(text: string, max: number): string {
  const one = text.replace(/\s+/g, ' ').trim();
  return one.length > max ? `${one.slice(0, max - 1)}…` : one;
}
