import { ApiError } from './api-error.js'
import type { Outcome } from './outcome.js'

/** Turns an Outcome into what a Google Node client's unary method gives: `[response]` or a rejection. */
export async function unary<T>(outcome: Promise<Outcome<T>>): Promise<[T]> {
  const result = await outcome
  if (!result.ok) throw new ApiError(result.status)
  return [result.response]
}
