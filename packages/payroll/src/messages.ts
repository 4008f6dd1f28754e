import { formatTaka, monthNames, toBengaliDigits } from '@beton/pdf/format';
import { SLIP_PASSWORD_RULES, type SlipPasswordSource } from './slip-password.ts';

const escape = (s: string) => s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);

/**
 * The slip's email. `passwordProtected`: the attached PDF is encrypted (slip-password.ts), so the
 * email says how to open it, and — since a misdirected email must leak nothing — leaves the net
 * pay out.
 */
export function slipEmail(p: {
  nameLatin: string;
  nameBengali: string;
  company: string;
  month: string;
  netPay: number;
  passwordProtected?: boolean;
  /** Which password opens it (the company's rule): the employee's slip code by default. */
  passwordSource?: SlipPasswordSource;
}) {
  const m = monthNames(p.month);
  const rule = SLIP_PASSWORD_RULES[p.passwordSource ?? 'code'];
  const subject = `Salary slip ${m.en} / বেতন স্লিপ ${m.bn} — ${p.company}`;
  const text = [
    `Dear ${p.nameLatin},`,
    p.passwordProtected
      ? `your salary slip for ${m.en} is attached. It is password-protected: to open it, enter ${rule.en}.`
      : `your salary slip for ${m.en} is attached. Net pay: ${formatTaka(p.netPay)}.`,
    '',
    `প্রিয় ${p.nameBengali},`,
    p.passwordProtected
      ? `${m.bn} মাসের বেতন স্লিপ সংযুক্ত করা হলো। স্লিপটি পাসওয়ার্ড দিয়ে সুরক্ষিত: খুলতে পাসওয়ার্ড হিসেবে দিন ${rule.bn}।`
      : `${m.bn} মাসের বেতন স্লিপ সংযুক্ত করা হলো। নিট বেতন: ৳ ${toBengaliDigits(p.netPay.toFixed(2))}।`,
    '',
    `— ${p.company}`,
  ].join('\n');
  const html = `<p>${text.split('\n').map(escape).join('<br>')}</p>`;
  return { subject, text, html };
}

export function reminderEmail(p: { nameLatin: string; nameBengali: string; company: string; month: string }) {
  const m = monthNames(p.month);
  const subject = `Payroll approved for ${m.en} / ${m.bn} মাসের বেতন অনুমোদিত`;
  const text = `Dear ${p.nameLatin}, ${p.company} approved payroll for ${m.en}; your salary is on its way.\n\nপ্রিয় ${p.nameBengali}, ${p.company} ${m.bn} মাসের বেতন অনুমোদন করেছে; আপনার বেতন শীঘ্রই পৌঁছাবে।`;
  return { subject, text, html: `<p>${text.split('\n').map(escape).join('<br>')}</p>` };
}

export function bankStatusEmail(p: { company: string; credited: number; window: string }) {
  const subject = `${p.credited} salaries credited / ${toBengaliDigits(p.credited)} জনের বেতন জমা হয়েছে`;
  const text = `${p.company}: the bank reports ${p.credited} salaries credited (poll ${p.window}).\n${p.company}: ব্যাংক ${toBengaliDigits(p.credited)} জনের বেতন জমা হওয়ার খবর দিয়েছে।`;
  return { subject, text, html: `<p>${text.split('\n').map(escape).join('<br>')}</p>` };
}
