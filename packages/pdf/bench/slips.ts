/**
 * Slips that vary like a real payroll, for the PDF benchmarks: every slip has its own
 * amounts, month and employee code, and a Bengali/Latin name drawn from pools of common
 * name words (so words repeat across employees, as they do in a company). With
 * `coldName` every slip gets a never-seen Bengali name, the worst case for any cache.
 */
import { sampleSlip } from '../src/index.ts';
import type { SlipData } from '../src/index.ts';

const GIVEN: Array<[string, string]> = [
  ['Mohammad', 'মোহাম্মদ'],
  ['Abdul', 'আব্দুল'],
  ['Nusrat', 'নুসরাত'],
  ['Farhana', 'ফারহানা'],
  ['Tanvir', 'তানভীর'],
  ['Sakib', 'সাকিব'],
  ['Arpita', 'অর্পিতা'],
  ['Sharmila', 'শর্মিলা'],
  ['Rakib', 'রাকিব'],
  ['Mahmud', 'মাহমুদ'],
  ['Jannatul', 'জান্নাতুল'],
  ['Ferdous', 'ফেরদৌস'],
  ['Sumaiya', 'সুমাইয়া'],
  ['Imran', 'ইমরান'],
  ['Taslima', 'তাসলিমা'],
  ['Priyanka', 'প্রিয়াঙ্কা'],
  ['Dipankar', 'দীপঙ্কর'],
  ['Soumitra', 'সৌমিত্র'],
  ['Krishna', 'কৃষ্ণ'],
  ['Shakti', 'শক্তি'],
];
const FAMILY: Array<[string, string]> = [
  ['Chowdhury', 'চৌধুরী'],
  ['Rahman', 'রহমান'],
  ['Hossain', 'হোসেন'],
  ['Akter', 'আক্তার'],
  ['Islam', 'ইসলাম'],
  ['Sarkar', 'সরকার'],
  ['Bhattacharya', 'ভট্টাচার্য'],
  ['Chakraborty', 'চক্রবর্তী'],
  ['Das', 'দাস'],
  ['Majumder', 'মজুমদার'],
  ['Khatun', 'খাতুন'],
  ['Talukder', 'তালুকদার'],
];
const CONSONANTS = ['ক', 'খ', 'গ', 'চ', 'জ', 'ত', 'দ', 'ন', 'প', 'ব', 'ম', 'র', 'ল', 'শ', 'স', 'হ', 'ন্ত', 'র্ম', 'স্ব', 'ক্ষ', 'প্র'];
const VOWEL_SIGNS = ['', 'া', 'ি', 'ী', 'ু', 'ে', 'ো', 'ৌ'];

function pick<T>(list: readonly T[], i: number): T {
  return list[i % list.length] as T;
}

/** A Bengali word no slip has used before (for the cold-cache pass). */
function freshWord(i: number): string {
  let word = '';
  let n = i + 1;
  while (n > 0) {
    word += pick(CONSONANTS, n) + pick(VOWEL_SIGNS, Math.floor(n / CONSONANTS.length));
    n = Math.floor(n / (CONSONANTS.length * VOWEL_SIGNS.length));
  }
  return `${word}র্থী`;
}

export function slip(i: number, coldName: boolean): SlipData {
  const given = pick(GIVEN, i * 7);
  const family = pick(FAMILY, i * 5 + 3);
  const basic = 18_000 + ((i * 7919) % 60_000);
  const earnings = sampleSlip().earnings.map((line, k) => ({
    ...line,
    amount: k === 0 ? basic : Math.round(basic * (0.05 + 0.1 * k) * 100) / 100,
  }));
  return sampleSlip({
    month: `2026-${String((i % 12) + 1).padStart(2, '0')}`,
    employee: {
      code: `EMP-${10_000 + i}`,
      nameLatin: `${given[0]} ${family[0]}`,
      nameBengali: coldName ? `${given[1]} ${freshWord(i)}` : `${given[1]} ${family[1]}`,
      email: `${given[0].toLowerCase()}.${family[0].toLowerCase()}${i}@example.com`,
    },
    earnings,
  });
}
