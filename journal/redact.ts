/**
 * Redaction: every JSON value the journal writes passes through {@link redact} first, so a
 * password, token, private key or Secret payload never reaches the database file. It errs
 * on the side of hiding: a redacted field costs a reader a detail, a leaked one costs a key.
 */
import { JournalError } from './errors.ts';

/** The text that replaces a hidden value. */
export const REDACTED = '[redacted]';

// Keys are compared lower-cased with separators removed: `private_key`, `privateKey` and
// `private-key` are one key. A suffix match catches `rootPassword`, `clientSecret`,
// `bearerToken`; references such as `secretName` or `secretKeyRef` end otherwise and stay.
const SECRET_SUFFIXES = [
  'password',
  'passwd',
  'passphrase',
  'secret',
  'token',
  'privatekey',
  'secretkey',
  'accesskey',
  'apikey',
  'credentials',
  'credential',
  'keydata',
  'certdata',
  'authorization',
  'cookie',
];
const SECRET_KEYS = new Set([
  'tlskey',
  'tlscrt',
  'cacrt',
  'cakey',
  'cert',
  'certificate',
  'clientkey',
  'clientcert',
  'peerkey',
  'peercert',
  'servercert',
  'serverkey',
  'pem',
]);
// Values that are secrets whatever their key: PEM blocks and HTTP credentials.
const PEM = /-----BEGIN [A-Z0-9 ]+-----[\s\S]*?(-----END [A-Z0-9 ]+-----|$)/g;
const HTTP_CREDENTIAL = /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/g;

/** True when a field of this name holds a secret. */
export function isSecretKey(key: string): boolean {
  const k = key.toLowerCase().replace(/[^a-z0-9]/g, '');
  return SECRET_KEYS.has(k) || SECRET_SUFFIXES.some((s) => k.endsWith(s));
}

/** Hides the secret parts of free text (error messages): PEM blocks and HTTP credentials. */
export function redactText(text: string): string {
  return text.replace(PEM, REDACTED).replace(HTTP_CREDENTIAL, `$1 ${REDACTED}`);
}

/** A deep copy of `value` with every secret field, Secret payload and secret-looking text hidden. */
export function redact(value: unknown): unknown {
  return walk(value, '', { seen: new WeakSet(), hidden: [] });
}

/** The redacted copy plus the path of every value it hid (`params.env[0].value`). */
export function redactReport(value: unknown): { value: unknown; hidden: string[] } {
  const ctx = { seen: new WeakSet<object>(), hidden: [] as string[] };
  return { value: walk(value, '', ctx), hidden: ctx.hidden };
}

interface Walk {
  readonly seen: WeakSet<object>;
  readonly hidden: string[];
}

function walk(value: unknown, path: string, ctx: Walk): unknown {
  if (typeof value === 'string') {
    const text = redactText(value);
    if (text !== value) ctx.hidden.push(path);
    return text;
  }
  if (typeof value === 'bigint') return value.toString();
  if (value === null || typeof value !== 'object') return value;
  if (ctx.seen.has(value)) return '[circular]';
  ctx.seen.add(value);
  try {
    if (Array.isArray(value)) return value.map((v, i) => walk(v, `${path}[${i}]`, ctx));
    if (value instanceof Date) return value.toISOString();
    if (value instanceof Uint8Array) return hide(path, ctx);
    const obj = value as Record<string, unknown>;
    // A Kubernetes Secret carries its payload under data/stringData whatever the keys are.
    const isSecret = obj.kind === 'Secret';
    // {name, value} pairs (env vars, headers) name their secret in `name`, not in the key.
    const namedSecret = typeof obj.name === 'string' && 'value' in obj && isSecretKey(obj.name);
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(obj)) {
      if (v === undefined) continue;
      const at = path === '' ? k : `${path}.${k}`;
      // `secret: {secretName}` (a volume source) is a reference: walked, not hidden whole.
      const reference = k === 'secret' && v !== null && typeof v === 'object';
      const secretField =
        (isSecretKey(k) && !reference) ||
        (isSecret && (k === 'data' || k === 'stringData')) ||
        (namedSecret && k === 'value');
      // Flags and counts (automountServiceAccountToken: false) hold no secret.
      const holdsText = (typeof v === 'string' && v !== '') || (typeof v === 'object' && v !== null);
      out[k] = secretField && holdsText ? hide(at, ctx) : walk(v, at, ctx);
    }
    return out;
  } finally {
    ctx.seen.delete(value);
  }
}

function hide(path: string, ctx: Walk): string {
  ctx.hidden.push(path);
  return REDACTED;
}

/** `JSON.stringify(redact(value))`, the only way the journal turns a value into stored text. */
export function redactedJson(value: unknown): string | null {
  if (value === undefined) return null;
  return JSON.stringify(redact(value));
}

/**
 * JSON for a value recovery must get back exactly (intent params, machine state): refused
 * with ERR_JOURNAL_SECRET when it holds a secret, since the stored copy would be redacted.
 */
export function exactJson(value: unknown, what: string): string | null {
  if (value === undefined) return null;
  const { value: safe, hidden } = redactReport(value);
  if (hidden.length > 0) {
    throw new JournalError(
      'ERR_JOURNAL_SECRET',
      `${what} holds secret-looking values at ${hidden.slice(0, 5).join(', ')}; the journal stores them as ` +
        `"${REDACTED}" and recovery would read that back: pass a reference (a Secret's name) instead`,
    );
  }
  return JSON.stringify(safe);
}
