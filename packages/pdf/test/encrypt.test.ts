/**
 * Password-protected slips (issue 22): the encrypted PDF is opened by an independent reader,
 * MuPDF (`mupdf` from npm), exactly as a recipient's viewer would: it asks for a password,
 * refuses a wrong one and nothing of the slip is readable without it; with the password the
 * page's text names the employee. Nothing personal is left in clear anywhere in the file.
 */
import * as mupdf from 'mupdf';
import { describe, expect, it } from 'vitest';
import { encryptPdf } from '../src/encrypt.ts';
import { createSlipRenderer, sampleSlip } from '../src/index.ts';

const PASSWORD = '05031990';
const utf16Hex = (s: string) => Buffer.from(`\ufeff${s}`, 'utf16le').swap16().toString('hex').toUpperCase();

describe('encryptPdf', () => {
  const renderer = createSlipRenderer();

  it('MuPDF asks for the password, refuses a wrong one, and with it reads the employee name (AES-256)', async () => {
    const data = sampleSlip();
    const plain = await renderer.render(data);
    const pdf = await encryptPdf(plain, PASSWORD);

    const locked = mupdf.Document.openDocument(pdf, 'application/pdf');
    expect(locked.needsPassword()).toBe(true);
    // Without the password nothing of the page can be read (MuPDF cannot decrypt its content).
    const unreadable = (() => {
      try {
        return locked.loadPage(0).toStructuredText('').asText();
      } catch {
        return '';
      }
    })();
    expect(unreadable).not.toContain(data.employee.nameLatin);
    expect(unreadable).not.toContain(data.employee.code);
    expect(locked.authenticatePassword('01011990')).toBe(0);
    expect(locked.authenticatePassword('')).toBe(0);

    const doc = mupdf.Document.openDocument(pdf, 'application/pdf');
    expect(doc.authenticatePassword(PASSWORD)).toBeGreaterThan(0);
    expect(doc.getMetaData('encryption')).toMatch(/256-bit AES/);
    const text = doc.loadPage(0).toStructuredText('').asText();
    expect(text).toContain(data.employee.nameLatin);
    expect(text).toContain(data.employee.code);
    expect(doc.getMetaData('info:Title')).toContain(data.employee.nameLatin);

    // The unencrypted slip opens without a password (the normal path is unchanged).
    const open = mupdf.Document.openDocument(plain, 'application/pdf');
    expect(open.needsPassword()).toBe(false);
  });

  it('leaves nothing personal in clear: no name, code, account or amount in the bytes, strings included', async () => {
    const data = sampleSlip();
    const bytes = Buffer.from(await encryptPdf(await renderer.render(data), PASSWORD)).toString('latin1');
    for (const secret of [data.employee.nameLatin, data.employee.code, data.employee.email, data.employee.bankAccount ?? '', data.company.name].filter(
      Boolean,
    )) {
      expect(bytes).not.toContain(secret);
      expect(bytes.toUpperCase()).not.toContain(utf16Hex(secret));
    }
    expect(bytes).not.toContain('(en-BD)'); // strings outside streams are encrypted too (see encrypt.ts)
  });

  it('refuses an empty password', async () => {
    await expect(encryptPdf(await renderer.render(sampleSlip()), '')).rejects.toThrow(/empty password/);
  });
});
