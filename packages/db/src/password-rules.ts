/** Shortest and longest password a user may choose: Better Auth's check and the forms' (client-safe: no hashing here). */
export const PASSWORD_LENGTH = { min: 12, max: 128 } as const;
