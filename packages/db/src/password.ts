import { hash, verify } from '@node-rs/argon2';

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
