import { prng } from '../../test/support/random.js'
import type { TextDoc } from './text-engines.js'

/** 1- to 4-term queries from words of random documents (seeded): real vocabulary, real co-occurrence. */
export function makeQueries(docs: readonly TextDoc[], perLength: number): { terms: number; text: string }[] {
  const rand = prng(2026)
  const out: { terms: number; text: string }[] = []
  for (let terms = 1; terms <= 4; terms++) {
    while (out.filter((q) => q.terms === terms).length < perLength) {
      const doc = docs[Math.floor(rand() * docs.length)] as TextDoc
      const words = [...new Set(doc.text.toLowerCase().match(/\b[a-z]{4,}\b/g) ?? [])]
      if (words.length < terms) continue
      const picked = new Set<string>()
      while (picked.size < terms) picked.add(words[Math.floor(rand() * words.length)] as string)
      out.push({ terms, text: [...picked].join(' ') })
    }
  }
  return out
}

