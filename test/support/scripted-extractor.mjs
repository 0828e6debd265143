// A scripted extractor for `quarry serve --extractor` (docs/memory-bank.md): its default export gets
// { kind, source, scope, events } and resolves to the facts. This one answers from a script keyed by
// the last user text, so a test decides exactly what the "model" extracts.
const SCRIPT = {
  'Book me a flight to Rome.': ['The user is planning a trip to Rome.'],
  'I always fly economy.': ['The user flies economy class.', 'The user is price-conscious.'],
}

export default async function extractor({ events }) {
  const texts = events.filter((e) => e.content?.role === 'user').flatMap((e) => (e.content.parts ?? []).map((p) => p.text ?? ''))
  return SCRIPT[texts[texts.length - 1]] ?? []
}
