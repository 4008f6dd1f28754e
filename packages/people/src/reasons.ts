/**
 * Why an employee's field (a form's or an import row's) was refused: one stable key per reason,
 * with its text in English and Bengali. The services answer keys (field errors, the import's
 * error rows); pages and the CSV report show the text. One source for both languages.
 */
export const REASONS = {
  'code.required': { en: 'Employee code is required', bn: 'কর্মচারী কোড আবশ্যক' },
  'code.format': { en: 'Employee code: 1–32 letters, digits, dots, dashes or underscores', bn: 'কর্মচারী কোড: ১–৩২টি অক্ষর, অঙ্ক, ডট, ড্যাশ বা আন্ডারস্কোর' },
  'code.taken': { en: 'Another employee of the company has this code', bn: 'কোম্পানির অন্য একজন কর্মচারীর এই কোড আছে' },
  'code.duplicateInFile': { en: 'This code is already on an earlier row of the file', bn: 'এই কোড ফাইলের আগের একটি সারিতে আছে' },
  'nameLatin.required': { en: 'Name (English) is required', bn: 'নাম (ইংরেজি) আবশ্যক' },
  'nameLatin.tooLong': { en: 'Name (English): at most 100 characters', bn: 'নাম (ইংরেজি): সর্বোচ্চ ১০০ অক্ষর' },
  'nameBengali.required': { en: 'Name (Bengali) is required', bn: 'নাম (বাংলা) আবশ্যক' },
  'nameBengali.tooLong': { en: 'Name (Bengali): at most 100 characters', bn: 'নাম (বাংলা): সর্বোচ্চ ১০০ অক্ষর' },
  'nameBengali.script': { en: 'Write the Bengali name in Bengali script', bn: 'বাংলা নাম বাংলা হরফে লিখুন' },
  'email.invalid': { en: 'Not a valid email address', bn: 'সঠিক ইমেইল ঠিকানা নয়' },
  'bankAccount.invalid': { en: 'Bank account: 6–34 digits (spaces and dashes allowed)', bn: 'ব্যাংক হিসাব: ৬–৩৪টি অঙ্ক (স্পেস ও ড্যাশ চলবে)' },
  'amount.required': { en: 'An amount in taka is required (0 if none)', bn: 'টাকার অঙ্ক আবশ্যক (না থাকলে 0)' },
  'amount.notNumber': { en: 'Must be an amount in taka, e.g. 25000 or 25000.50', bn: 'টাকার অঙ্ক হতে হবে, যেমন 25000 বা 25000.50' },
  'amount.negative': { en: 'Must not be negative', bn: 'ঋণাত্মক হতে পারবে না' },
  'amount.tooLarge': { en: 'Too large: at most 10,000,000 taka', bn: 'অনেক বড়: সর্বোচ্চ ১,০০,০০,০০০ টাকা' },
  'amount.decimals': { en: 'At most 2 decimal places (paisa)', bn: 'দশমিকের পরে সর্বোচ্চ ২ অঙ্ক (পয়সা)' },
  'basic.zero': { en: 'Basic salary must be more than 0', bn: 'মূল বেতন ০-এর বেশি হতে হবে' },
  'salary.netNotPositive': { en: 'Deductions (tax + provident fund) must be less than the earnings', bn: 'কর্তন (কর + ভবিষ্য তহবিল) আয়ের চেয়ে কম হতে হবে' },
  'month.invalid': { en: 'Month must look like 2026-12', bn: 'মাস 2026-12 এর মতো লিখুন' },
  'file.empty': { en: 'The file is empty', bn: 'ফাইলটি খালি' },
  'file.tooLarge': { en: 'The file is too large', bn: 'ফাইলটি অনেক বড়' },
  'file.type': { en: 'Upload a CSV (.csv) or Excel (.xlsx) file', bn: 'CSV (.csv) বা Excel (.xlsx) ফাইল আপলোড করুন' },
  'file.inflatesTooMuch': {
    en: 'The file unpacks to far more than a spreadsheet of employees holds (a compressed "zip bomb"?): save it again from your spreadsheet program, or split it',
    bn: 'ফাইলটি খুললে কর্মচারীদের একটি স্প্রেডশিটের চেয়ে অনেক বেশি বড় হয় (সংকুচিত "জিপ বোমা"?): স্প্রেডশিট প্রোগ্রাম থেকে আবার সংরক্ষণ করুন, বা ভাগ করুন',
  },
  'file.tooManyRows': {
    en: 'The file has more rows than one import takes: split it into several files',
    bn: 'ফাইলটিতে একবারের আমদানির চেয়ে বেশি সারি আছে: কয়েকটি ফাইলে ভাগ করুন',
  },
  'file.unreadable': { en: 'The file could not be read as CSV or Excel (.xlsx)', bn: 'ফাইলটি CSV বা Excel (.xlsx) হিসেবে পড়া যায়নি' },
  'column.missing': { en: 'This column is missing from the header row', bn: 'শিরোনাম সারিতে এই কলাম নেই' },
} as const satisfies Record<string, { en: string; bn: string }>;

export type ReasonKey = keyof typeof REASONS;

/** The text of a reason key; an unknown key (a message from elsewhere) is shown as it is. */
export function reasonText(key: string): { en: string; bn: string } {
  return (REASONS as Record<string, { en: string; bn: string }>)[key] ?? { en: key, bn: key };
}
