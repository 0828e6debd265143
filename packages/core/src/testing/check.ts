import { QuarryError, describe } from '../errors.js'

/**
 * Option checks of the testing helpers: a bad option is a mistake in a test, refused up front
 * (when the arbitrary is built, not when a run fails) with a message that says how to fix it.
 */
export function invalidOption(path: string, expected: string, received: unknown): QuarryError {
  return new QuarryError('INVALID_OPTION', `${path} must be ${expected}; received ${describe(received)}.`, { path })
}

/** An integer option in [min, max]; its fallback when undefined, or refused when there is none (required). */
export function intOption(value: number | undefined, path: string, min: number, max: number, fallback?: number): number {
  if (value === undefined && fallback !== undefined) return fallback
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) throw invalidOption(path, `an integer from ${min} to ${max}`, value)
  return value
}

/** A number option in [min, max], or its fallback when undefined. */
export function numberOption(value: number | undefined, path: string, min: number, max: number, fallback: number): number {
  if (value === undefined) return fallback
  if (typeof value !== 'number' || !(value >= min && value <= max)) throw invalidOption(path, `a number from ${min} to ${max}`, value)
  return value
}
