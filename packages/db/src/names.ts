/** Bengali given and family names with their usual Latin spelling. */
export const GIVEN_NAMES: ReadonlyArray<readonly [latin: string, bengali: string]> = [
  ['Rahim', 'রহিম'], ['Karim', 'করিম'], ['Fatema', 'ফাতেমা'], ['Ayesha', 'আয়েশা'], ['Nusrat', 'নুসরাত'],
  ['Tanvir', 'তানভীর'], ['Sadia', 'সাদিয়া'], ['Mahmud', 'মাহমুদ'], ['Farhana', 'ফারহানা'], ['Imran', 'ইমরান'],
  ['Shirin', 'শিরিন'], ['Arif', 'আরিফ'], ['Rumana', 'রুমানা'], ['Habib', 'হাবিব'], ['Sharmin', 'শারমিন'],
  ['Kamal', 'কামাল'], ['Jamila', 'জামিলা'], ['Rafiq', 'রফিক'], ['Nasrin', 'নাসরিন'], ['Sabbir', 'সাব্বির'],
  ['Priya', 'প্রিয়া'], ['Sujon', 'সুজন'], ['Tania', 'তানিয়া'], ['Mithun', 'মিঠুন'], ['Shuvo', 'শুভ'],
  ['Anika', 'অনিকা'], ['Rakib', 'রাকিব'], ['Moushumi', 'মৌসুমী'], ['Sourav', 'সৌরভ'], ['Ishrat', 'ইশরাত'],
];

export const FAMILY_NAMES: ReadonlyArray<readonly [latin: string, bengali: string]> = [
  ['Uddin', 'উদ্দিন'], ['Hossain', 'হোসেন'], ['Rahman', 'রহমান'], ['Islam', 'ইসলাম'], ['Ahmed', 'আহমেদ'],
  ['Chowdhury', 'চৌধুরী'], ['Akter', 'আক্তার'], ['Sarkar', 'সরকার'], ['Das', 'দাস'], ['Khatun', 'খাতুন'],
  ['Talukder', 'তালুকদার'], ['Mondal', 'মণ্ডল'], ['Biswas', 'বিশ্বাস'], ['Karmakar', 'কর্মকার'], ['Bhuiyan', 'ভূঁইয়া'],
];

export const COMPANY_WORDS = [
  'Padma', 'Meghna', 'Jamuna', 'Karnaphuli', 'Surma', 'Teesta', 'Sundarban', 'Shapla', 'Kanchan', 'Doel',
  'Bakul', 'Shimul', 'Palash', 'Kadam', 'Hilsa', 'Sonar', 'Nakshi', 'Rupali', 'Sabuj', 'Akash',
] as const;

export const COMPANY_KINDS = ['Textiles', 'Garments', 'Pharma', 'Foods', 'Logistics', 'Steel', 'Software', 'Traders', 'Agro', 'Ceramics'] as const;
