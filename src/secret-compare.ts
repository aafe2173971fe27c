// Secret comparison for every runtime (Node, workerd, Vercel's Edge): Web Crypto only.
const encoder = new TextEncoder();

export const digest = async (text: string): Promise<Uint8Array> => new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(text)));

/**
 * Compares the SHA-256 digest of `given` with an expected digest by an XOR loop:
 * both are 32 bytes whatever the inputs' lengths, so the time says nothing about
 * where they differ or how long the secret is.
 */
export const sameDigest = async (given: string, expected: Uint8Array): Promise<boolean> => {
  const a = await digest(given);
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ expected[i]!;
  return diff === 0 && a.length === expected.length;
};

/** Equality of two secrets (tokens, passwords) in the same time wherever they differ. */
export const sameText = async (a: string, b: string): Promise<boolean> => sameDigest(a, await digest(b));
