/**
 * Which passwords Beton refuses (NIST SP 800-63B §5.1.1.2; OWASP ASVS 4 V2.1): the length of
 * PASSWORD_LENGTH, and nothing an attacker's list tries early — a password from the lists of
 * commonly used and breached passwords, repeated or sequential characters, keyboard rows, dates,
 * and the user's own context (their email address and its parts, their name, their company,
 * "Beton"). No composition rules (no "one digit, one capital"): a long phrase of unrelated words
 * passes.
 *
 * The judge is zxcvbn (`@zxcvbn-ts/core`), offline, with the dictionaries shipped through npm:
 * `@zxcvbn-ts/language-common` (49,233 common and breached passwords, the diceware list,
 * keyboard layouts) and `@zxcvbn-ts/language-en` (common English words and names). A password
 * whose estimated guesses are under MIN_GUESSES (zxcvbn's score 3: "safely unguessable against
 * an online attack, moderate protection against an offline slow-hash attack" — our hashes are
 * argon2id), or that is mostly the user's own context, is refused with the reason: the kind of
 * pattern that made it guessable, in English and Bengali.
 *
 * Checked for every password a person chooses (the change-password endpoint) and for every
 * password Beton makes (one-time passwords of new users, seeded logins). Server-side only: the
 * dictionaries are large (loaded once, on first use, ~150 ms).
 */
import type { Match, ZxcvbnFactory } from '@zxcvbn-ts/core';
import { PASSWORD_LENGTH } from './password-rules.ts';

/** Fewer estimated guesses than this is refused (zxcvbn's score 3 starts at 10^8). */
export const MIN_GUESSES = 1e8;

/** Why a password was refused: one key per reason, its text in English and Bengali (one source for the API, the pages and the CLI). */
export const PASSWORD_REASONS = {
  tooShort: {
    en: `Use at least ${PASSWORD_LENGTH.min} characters`,
    bn: `অন্তত ${PASSWORD_LENGTH.min}টি অক্ষর ব্যবহার করুন`,
  },
  tooLong: {
    en: `Use at most ${PASSWORD_LENGTH.max} characters`,
    bn: `সর্বোচ্চ ${PASSWORD_LENGTH.max}টি অক্ষর ব্যবহার করুন`,
  },
  common: {
    en: 'This password is on the lists of common and leaked passwords that attackers try first: choose another',
    bn: 'এই পাসওয়ার্ডটি বহুল ব্যবহৃত ও ফাঁস হওয়া পাসওয়ার্ডের তালিকায় আছে, যা আক্রমণকারীরা আগে চেষ্টা করে: অন্য একটি বেছে নিন',
  },
  repeated: {
    en: 'Repeated characters or words (like aaaa or abcabc) are easy to guess',
    bn: 'একই অক্ষর বা শব্দের পুনরাবৃত্তি (যেমন aaaa বা abcabc) সহজে অনুমান করা যায়',
  },
  sequential: {
    en: 'Sequences (like 1234 or abcd) are easy to guess',
    bn: 'ধারাবাহিক অক্ষর বা সংখ্যা (যেমন 1234 বা abcd) সহজে অনুমান করা যায়',
  },
  keyboard: {
    en: 'Rows of the keyboard (like qwerty or asdfgh) are easy to guess',
    bn: 'কীবোর্ডের সারি (যেমন qwerty বা asdfgh) সহজে অনুমান করা যায়',
  },
  date: {
    en: 'Dates and years are easy to guess',
    bn: 'তারিখ ও সাল সহজে অনুমান করা যায়',
  },
  context: {
    en: 'Do not build your password from your email address, your name, your company or "Beton"',
    bn: 'আপনার ইমেইল ঠিকানা, নাম, কোম্পানি বা "বেতন" (Beton) দিয়ে পাসওয়ার্ড বানাবেন না',
  },
  guessable: {
    en: 'Too easy to guess: use a longer phrase of words that do not belong together',
    bn: 'অনুমান করা অনেক সহজ: একসাথে মানায় না এমন কয়েকটি শব্দের একটি লম্বা বাক্যাংশ ব্যবহার করুন',
  },
} as const satisfies Record<string, { en: string; bn: string }>;

export type PasswordReason = keyof typeof PASSWORD_REASONS;

/** Who the password is for: their own words are refused. */
export interface PasswordContext {
  email?: string | null | undefined;
  name?: string | null | undefined;
  company?: string | null | undefined;
}

export type PasswordVerdict = { ok: true } | { ok: false; reason: PasswordReason; text: { en: string; bn: string } };

let judge: Promise<ZxcvbnFactory> | undefined;
/** zxcvbn with its dictionaries, loaded on first use (importing this module costs nothing). */
function zxcvbn(): Promise<ZxcvbnFactory> {
  judge ??= (async () => {
    const [{ ZxcvbnFactory }, common, en] = await Promise.all([
      import('@zxcvbn-ts/core'),
      import('@zxcvbn-ts/language-common'),
      import('@zxcvbn-ts/language-en'),
    ]);
    return new ZxcvbnFactory({
      dictionary: {
        ...common.dictionary,
        'commonWords-en': en.dictionary['commonWords-en'],
        'firstnames-en': en.dictionary['firstnames-en'],
        'lastnames-en': en.dictionary['lastnames-en'],
      },
      graphs: common.adjacencyGraphs,
      // Edit-distance matching costs 10–100× the time per check (measured: 0.2–2.4 s a password).
      useLevenshteinDistance: false,
    });
  })();
  return judge;
}

/** The context words of a user: the address, its local part and the parts of that, the name's and the company's words, the product. */
export function contextWords(context: PasswordContext): string[] {
  const words = new Set<string>(['beton', 'বেতন', 'payroll']);
  const add = (w: string | null | undefined) => {
    const word = (w ?? '').trim().toLowerCase();
    if (word.length >= 3) words.add(word);
  };
  const email = (context.email ?? '').trim().toLowerCase();
  if (email) {
    add(email);
    const [local = '', domain = ''] = email.split('@');
    add(local);
    add(local.replace(/[._+-]+/g, ''));
    for (const part of local.split(/[._+-]+/)) add(part);
    add(domain.split('.')[0]);
  }
  for (const text of [context.name, context.company]) {
    add(text);
    add((text ?? '').replace(/[\s,.&()'-]+/g, ''));
    for (const part of (text ?? '').split(/[\s,.&()'-]+/)) add(part);
  }
  return [...words];
}

/** `password` with every occurrence of the words taken out (any case). */
function withoutWords(password: string, words: string[]): string {
  let rest = password;
  for (const word of [...words].sort((a, b) => b.length - a.length)) {
    const escaped = word.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    rest = rest.replace(new RegExp(escaped, 'giu'), '');
  }
  return rest;
}

const REASON_OF_PATTERN: Array<[(m: Match) => boolean, PasswordReason]> = [
  [(m) => m.pattern === 'dictionary' && m.dictionaryName === 'userInputs', 'context'],
  [(m) => m.pattern === 'dictionary' && String(m.dictionaryName).startsWith('passwords'), 'common'],
  [(m) => m.pattern === 'repeat', 'repeated'],
  [(m) => m.pattern === 'sequence', 'sequential'],
  [(m) => m.pattern === 'spatial', 'keyboard'],
  [(m) => m.pattern === 'date' || (m.pattern === 'regex' && m.regexName === 'recentYear'), 'date'],
];

function refused(reason: PasswordReason): PasswordVerdict {
  return { ok: false, reason, text: PASSWORD_REASONS[reason] };
}

/** Whether `password` may be chosen by (or made for) the user of `context`; if not, why. */
export async function checkNewPassword(password: string, context: PasswordContext = {}): Promise<PasswordVerdict> {
  const length = [...password].length; // code points, as NIST counts them
  if (length < PASSWORD_LENGTH.min) return refused('tooShort');
  if (length > PASSWORD_LENGTH.max) return refused('tooLong');
  const judge = await zxcvbn();
  const words = contextWords(context);
  const result = judge.check(password, words);
  // The user's own words are known to an attacker: what is left without them must hold on its own.
  const rest = withoutWords(password, words);
  if (rest !== password && judge.check(rest, words).guesses < MIN_GUESSES) return refused('context');
  if (result.guesses >= MIN_GUESSES) return { ok: true };
  // The kind of pattern that covers most of it says why it is guessable.
  const covered = (test: (m: Match) => boolean) => result.sequence.filter(test).reduce((n, m) => n + (m.j - m.i + 1), 0);
  let best: { reason: PasswordReason; chars: number } = { reason: 'guessable', chars: 0 };
  for (const [test, reason] of REASON_OF_PATTERN) {
    const chars = covered(test);
    if (chars > best.chars) best = { reason, chars };
  }
  return refused(best.reason);
}

/**
 * A password Beton makes for the user of `context` (a one-time password): random
 * (generatePassword, the operating system's source) and held to the same rule as a chosen one —
 * a draw the rule refuses (a keyboard row or a run by chance) is drawn again.
 */
export async function generateAcceptedPassword(context: PasswordContext, draw: () => string): Promise<string> {
  for (let i = 0; i < 100; i++) {
    const password = draw();
    if ((await checkNewPassword(password, context)).ok) return password;
  }
  throw new Error('generateAcceptedPassword: 100 draws refused: the generator is broken');
}
