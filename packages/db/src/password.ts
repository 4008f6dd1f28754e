import { hash, verify } from '@node-rs/argon2';
import { randomInt } from 'node:crypto';

/** Argon2id parameters (OWASP's minimum: 19 MiB, 2 passes, 1 lane). */
const ARGON2 = { memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

/** Argon2id, the memory-hard hash every Beton password is stored with (accounts.password). */
export function hashPassword(password: string): Promise<string> {
  return hash(password, ARGON2);
}

/** False for a wrong password and for anything that is not an argon2 hash. */
export function verifyPassword(hashed: string, password: string): Promise<boolean> {
  return verify(hashed, password).catch(() => false);
}

/** Letters and digits that cannot be mistaken for each other when read aloud or copied by hand. */
const PASSWORD_ALPHABET = 'abcdefghjkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789';

/**
 * A password from the operating system's cryptographic source (`crypto.randomInt`): 16
 * characters of a 55-letter alphabet, about 92 bits. Used for every password Beton makes
 * (seeded logins, one-time passwords of new users); never a seeded generator.
 */
export function generatePassword(length = 16): string {
  return Array.from({ length }, () => PASSWORD_ALPHABET[randomInt(PASSWORD_ALPHABET.length)]).join('');
}

export { PASSWORD_LENGTH } from './password-rules.ts';
