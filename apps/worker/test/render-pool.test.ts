/**
 * The render pool's threads (the production render-thread.ts in Piscina): a slip whose text
 * the font cannot all draw still renders, and the pool reports it with the employee's code
 * (main.ts logs it), once per text.
 */
import { sampleSlip, type UnsupportedText } from '@beton/pdf';
import * as mupdf from 'mupdf';
import { afterAll, describe, expect, it } from 'vitest';
import { createRenderPool } from '../src/render-pool.ts';

describe('render pool', () => {
  const reported: UnsupportedText[] = [];
  const pool = createRenderPool(1, { onUnsupportedText: (event) => reported.push(event) });
  afterAll(() => pool.close());

  it('renders, and reports characters the font lacks with the employee code', async () => {
    const signal = new AbortController().signal;
    const plain = await pool.render(sampleSlip(), { signal });
    expect(Buffer.from(plain.subarray(0, 5)).toString('latin1')).toBe('%PDF-');
    expect(reported).toEqual([]);

    const pdf = await pool.render(sampleSlip({ employee: { code: 'EMP-90001', nameBengali: 'রহিম 😀', nameLatin: 'Rahim क' } }), { signal });
    expect(Buffer.from(pdf.subarray(0, 5)).toString('latin1')).toBe('%PDF-');
    expect(reported).toEqual([
      { employeeCode: 'EMP-90001', text: 'Rahim क', characters: ['U+0915'] },
      { employeeCode: 'EMP-90001', text: 'রহিম 😀', characters: ['U+1F600'] },
    ]);
  }, 120_000);

  it('a protected slip is encrypted in the render thread: MuPDF opens it only with its password', async () => {
    const pdf = await pool.render(sampleSlip(), { signal: new AbortController().signal, password: '05031990' });
    const doc = mupdf.Document.openDocument(pdf, 'application/pdf');
    expect(doc.needsPassword()).toBe(true);
    expect(doc.authenticatePassword('05031990')).toBeGreaterThan(0);
    expect(doc.loadPage(0).toStructuredText('').asText()).toContain(sampleSlip().employee.nameLatin);
  }, 120_000);
});
