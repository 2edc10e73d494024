/** Kubernetes resource quantities (`1Gi`, `500M`, `1.5e3`) as byte counts, for comparing sizes. */

const SUFFIX: Readonly<Record<string, number>> = {
  '': 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
  m: 1e-3,
};

/** A quantity string that is not one Kubernetes accepts. */
export class QuantityError extends Error {
  readonly code = 'ERR_QUANTITY';
  override readonly name = 'QuantityError';
  constructor(text: string) {
    super(`not a Kubernetes quantity: ${JSON.stringify(text)}`);
  }
}

/** The value of a quantity as a number (bytes for storage); throws QuantityError when malformed. */
export function parseQuantity(text: string): number {
  const m = /^([+-]?(?:\d+\.?\d*|\.\d+))(?:([eE][+-]?\d+)|([a-zA-Z]*))$/.exec(text.trim());
  if (!m?.[1]) throw new QuantityError(text);
  if (m[2]) return Number(m[1] + m[2]);
  const factor = SUFFIX[m[3] ?? ''];
  if (factor === undefined) throw new QuantityError(text);
  return Number(m[1]) * factor;
}
