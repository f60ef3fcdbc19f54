// A field-by-field comparison of two JSON documents, for the conflict view: every leaf that
// differs, by its path (`contracts[0].state`), with the value on each side. Objects are
// compared by key, arrays by position; a field only one side has is shown as missing on the
// other.

/** One difference. */
export interface Difference {
  path: string;
  /** This device's value, or undefined when it lacks the field. */
  local: unknown;
  /** The record's value, or undefined when it lacks the field. */
  record: unknown;
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

function isObject(value: unknown): value is Record<string, Json> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function join(path: string, key: string | number): string {
  if (typeof key === "number") return `${path}[${key}]`;
  return path ? `${path}.${key}` : key;
}

/** Every difference between `local` and `record`, in document order. */
export function differences(local: unknown, record: unknown, path = ""): Difference[] {
  if (Array.isArray(local) && Array.isArray(record)) {
    const length = Math.max(local.length, record.length);
    return Array.from({ length }, (_, index) => differences(local[index], record[index], join(path, index))).flat();
  }
  if (isObject(local) && isObject(record)) {
    const keys = [...new Set([...Object.keys(local), ...Object.keys(record)])];
    return keys.flatMap((key) => differences(local[key], record[key], join(path, key)));
  }
  if (JSON.stringify(local) === JSON.stringify(record)) return [];
  return [{ path: path || "(whole)", local, record }];
}

/** A value as the view shows it: JSON text, or "missing". */
export function shown(value: unknown): string {
  return value === undefined ? "missing" : JSON.stringify(value);
}
