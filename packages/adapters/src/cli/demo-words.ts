import { createIndex, loadGloveVectors, type QuarryIndex, type SearchResult } from '@quarry/core'
import { progress } from './progress.js'
import { renderTable } from './table.js'

/** How many of the most frequent GloVe words the demo indexes. */
const DEMO_WORDS = 40_000

/**
 * The dense-search demo: nearest neighbours among real GloVe word vectors (from the package
 * @quarry/glove), an analogy by vector arithmetic, and a filtered search, each with the
 * planner's choice. Runs offline.
 */
export function runWordDemo(out: (line: string) => void = console.log): void {
  const glove = loadGloveVectors({ limit: DEMO_WORDS })
  const dim = glove.dimensions
  const index: QuarryIndex = createIndex({ dimensions: dim, metric: 'cosine' })
  const bar = progress('Indexing GloVe word vectors (HNSW)', glove.words.length, 'words')
  glove.words.forEach((word, i) => {
    index.add({ id: word, vector: glove.vectors.subarray(i * dim, (i + 1) * dim), metadata: { rank: i + 1, length: word.length } })
    if (i % 500 === 0) bar.tick(i)
  })
  bar.done(`${index.size} records, ${dim} dimensions, cosine`)

  const show = (title: string, result: SearchResult): void => {
    out(`\n${title}`)
    out(`  planner: ${result.stats.strategy} (${result.stats.reason})`)
    out(
      renderTable(
        ['rank', 'word', 'cosine', 'distance', 'frequency rank'],
        result.hits.map((hit, i) => [i + 1, hit.id, hit.score, hit.distance ?? Number.NaN, hit.metadata.rank as number]),
      )
        .split('\n')
        .map((line) => `  ${line}`)
        .join('\n'),
    )
  }

  for (const word of ['coffee', 'python', 'paris']) {
    show(`Nearest neighbours of "${word}"`, index.search({ id: word, topK: 6 }))
  }
  show('Analogy: king - man + woman', index.search({ vector: analogy(index, 'king', 'man', 'woman'), topK: 6, filter: (_m, id) => !['king', 'man', 'woman'].includes(id) }))
  show(
    'Filtered: words like "music" among rare words (frequency rank > 20,000, about half the index)',
    index.search({ id: 'music', topK: 6, filter: (m) => (m.rank as number) > 20_000 }),
  )
  show('Filtered: words like "ocean" with exactly 5 letters (about 11% of the index)', index.search({ id: 'ocean', topK: 6, filter: (m) => m.length === 5 }))
  show(
    'Filtered: words like "guitar" among frequency ranks 10,001-10,400 (1% of the index)',
    index.search({ id: 'guitar', topK: 6, filter: (m) => (m.rank as number) > 10_000 && (m.rank as number) <= 10_400 }),
  )
}

/** a - b + c over stored vectors. */
function analogy(index: QuarryIndex, a: string, b: string, c: string): Float32Array {
  const [va, vb, vc] = [a, b, c].map((w) => index.get(w)?.vector ?? new Float32Array(index.options.dimensions ?? 0))
  return (va as Float32Array).map((x, i) => x - ((vb as Float32Array)[i] as number) + ((vc as Float32Array)[i] as number))
}
