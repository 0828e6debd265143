import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { CollectionError, evaluateRun, rankIds, readCollection } from '@quarry/adapters'
import { runQuarry } from '../support/run-cli.js'

const dir = mkdtempSync(join(tmpdir(), 'quarry-eval-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

function write(name: string, text: string): string {
  const file = join(dir, name)
  writeFileSync(file, text)
  return file
}

/**
 * Three documents and two judged queries whose rankings can be worked out by hand:
 * - "apple": BM25 ranks d1 (tf 3 in 3 words) over d2 (tf 1 in 5) and never returns d3; dense
 *   ranks d1 (the same words: cosine 1), then d2 (shares "apple"), then d3 (shares nothing).
 * - "grape": d3 first, both ways.
 * q3's only judgment is 0 (not relevant): it is left out of every average.
 */
const corpus = write(
  'corpus.jsonl',
  ['{"_id": "d1", "title": "", "text": "apple apple apple"}', '{"_id": "d2", "title": "fruit", "text": "apple banana cherry date"}', '{"_id": "d3", "text": "grape"}', ''].join('\n'),
)
const queries = write('queries.jsonl', ['{"_id": "q1", "text": "apple"}', '{"_id": "q2", "text": "grape"}', '{"_id": "q3", "text": "banana"}'].join('\n'))
const qrels = write('qrels.tsv', ['query-id\tcorpus-id\tscore', 'q1\td2\t1', 'q1\td3\t2', 'q2\td3\t1', 'q3\td2\t0', ''].join('\n'))

// Hand-computed (trec_eval's definitions). q1's ideal DCG: grades 2 then 1 → 2/log2(2) + 1/log2(3).
const idcg1 = 2 + 1 / Math.log2(3)
const bm25 = {
  // q1 ranks [d1, d2]: d2 (grade 1) at rank 2; d3 missing. q2 ranks d3 first: 1 everywhere.
  ndcg10: (1 / Math.log2(3) / idcg1 + 1) / 2,
  map100: ((1 / 2) / 2 + 1) / 2,
  recall100: (1 / 2 + 1) / 2,
}
const dense = {
  // q1 ranks [d1, d2, d3]: d2 at rank 2 (precision 1/2), d3 at rank 3 (precision 2/3).
  ndcg10: ((1 / Math.log2(3) + 2 / Math.log2(4)) / idcg1 + 1) / 2,
  map100: ((1 / 2 + 2 / 3) / 2 + 1) / 2,
  recall100: 1,
}

describe('judged collections and trec_eval metrics', () => {
  it('reads BEIR files (header, _id or id, missing title) and TREC qrels', () => {
    const c = readCollection({ corpus, queries, qrels })
    expect(c.docs).toEqual([
      { id: 'd1', title: '', text: 'apple apple apple' },
      { id: 'd2', title: 'fruit', text: 'apple banana cherry date' },
      { id: 'd3', title: '', text: 'grape' },
    ])
    expect(c.queries.map((q) => q.id)).toEqual(['q1', 'q2', 'q3'])
    expect([...c.qrels].map(([q, g]) => [q, [...g]])).toEqual([
      ['q1', [['d2', 1], ['d3', 2]]],
      ['q2', [['d3', 1]]],
      ['q3', [['d2', 0]]],
    ])
    const trec = write('qrels.trec', 'q1 0 d2 1\nq1 0 d3 2\n')
    const ids = write('ids.jsonl', '{"id": 7, "text": "numeric id"}\n')
    expect([...readCollection({ corpus: ids, queries, qrels: trec }).qrels.get('q1') ?? []]).toEqual([['d2', 1], ['d3', 2]])
    expect(readCollection({ corpus: ids, queries, qrels: trec }).docs).toEqual([{ id: '7', title: '', text: 'numeric id' }])
  })

  it('names the file and line of a bad entry', () => {
    const bad = (name: string, text: string, message: string): void => {
      const file = write(name, text)
      const files = { corpus: name.includes('corpus') ? file : corpus, queries: name.includes('queries') ? file : queries, qrels: name.includes('qrels') ? file : qrels }
      expect(() => readCollection(files)).toThrow(new CollectionError(file, message.startsWith('no such') ? undefined : 2, message))
    }
    bad('corpus-bad.jsonl', '{"_id": "a", "text": "x"}\n{"text": "no id"}\n', 'has no "_id" (a non-empty string)')
    bad('corpus-dup.jsonl', '{"_id": "a"}\n{"_id": "a"}\n', 'repeats the _id "a"')
    bad('queries-bad.jsonl', '{"_id": "a", "text": "x"}\nnot json\n', 'not a JSON object')
    bad('qrels-bad.tsv', 'q1\td1\t1\nq1\td2\tlots\n', 'the score "lots" is not a number')
    expect(() => readCollection({ corpus: join(dir, 'none.jsonl'), queries, qrels })).toThrow(`${join(dir, 'none.jsonl')}: no such file`)
  })

  it('computes nDCG@10, MAP@100 and Recall@100 as worked out by hand; ties ranked by id', () => {
    const c = readCollection({ corpus, queries, qrels })
    const run = new Map([
      ['q1', ['d1', 'd2']],
      ['q2', ['d3']],
      ['q3', ['d2']],
    ])
    const m = evaluateRun(c, run)
    expect(m.queries).toBe(2)
    expect(m.ndcg10).toBeCloseTo(bm25.ndcg10, 12)
    expect(m.map100).toBeCloseTo(bm25.map100, 12)
    expect(m.recall100).toBeCloseTo(bm25.recall100, 12)
    expect(evaluateRun(c, new Map())).toEqual({ ndcg10: 0, map100: 0, recall100: 0, queries: 2 })
    expect(evaluateRun({ ...c, qrels: new Map() }, run)).toEqual({ ndcg10: 0, map100: 0, recall100: 0, queries: 0 })
    expect(rankIds([{ id: 'b', score: 1 }, { id: 'a', score: 1 }, { id: 'c', score: 2 }], 2)).toEqual(['c', 'a'])
  })
})

describe('quarry eval', () => {
  it('scores BM25, dense and hybrid on the judged queries: the hand-computed values, a table and an SVG plot', async () => {
    const plot = join(dir, 'plot.svg')
    const args = ['eval', '--corpus', corpus, '--queries', queries, '--qrels', qrels, '--alpha', '0.5,0,1', '--plot', plot, '--embedder', 'hashing']
    const json = await runQuarry([...args, '--json'])
    expect(json.err).toBe('')
    expect(json.code).toBe(0)
    const result = JSON.parse(json.out) as { documents: number; queries: number; embedder: string; results: { mode: string; alpha: number; ndcg10: number; map100: number; recall100: number }[] }
    expect({ documents: result.documents, queries: result.queries, embedder: result.embedder }).toEqual({ documents: 3, queries: 2, embedder: 'hashing-256' })
    expect(result.results.map((r) => [r.mode, r.alpha])).toEqual([
      ['bm25', 0],
      ['hybrid', 0.5],
      ['dense', 1],
    ])
    // Hybrid at 0.5 ranks as dense here: d1 leads both lists, and d2 (in both) outranks d3 (dense only, last there).
    for (const [row, want] of [
      [result.results[0], bm25],
      [result.results[1], dense],
      [result.results[2], dense],
    ] as const) {
      expect(row?.ndcg10).toBeCloseTo(want.ndcg10, 12)
      expect(row?.map100).toBeCloseTo(want.map100, 12)
      expect(row?.recall100).toBeCloseTo(want.recall100, 12)
    }

    const table = await runQuarry(args)
    expect(table.code).toBe(0)
    expect(table.out).toBe(
      [
        '3 documents, 2 judged queries, embedder hashing-256',
        'mode    alpha  nDCG@10  MAP@100  Recall@100',
        '------  -----  -------  -------  ----------',
        `BM25    0.00   ${bm25.ndcg10.toFixed(4)}   ${bm25.map100.toFixed(4)}   ${bm25.recall100.toFixed(4)}`,
        `hybrid  0.50   ${dense.ndcg10.toFixed(4)}   ${dense.map100.toFixed(4)}   1.0000`,
        `dense   1.00   ${dense.ndcg10.toFixed(4)}   ${dense.map100.toFixed(4)}   1.0000`,
        `Plot: ${plot}`,
      ].join('\n'),
    )
    const svg = readFileSync(plot, 'utf8')
    expect(svg).toMatch(/^<svg /)
    for (const name of ['nDCG@10', 'MAP@100', 'Recall@100', 'alpha (0 = BM25 only, 1 = dense only)']) expect(svg).toContain(name)
    expect(svg.match(/<polyline /g)).toHaveLength(3)
  })

  it('refuses missing files, bad alphas and collections without a relevant judgment in one line', async () => {
    const missing = await runQuarry(['eval', '--corpus', corpus, '--queries', queries])
    expect(missing.code).toBe(2)
    expect(missing.err.split('\n')[0]).toBe('quarry eval: give --qrels (or --example: the judged example shipped with Quarry)')
    const alpha = await runQuarry(['eval', '--corpus', corpus, '--queries', queries, '--qrels', qrels, '--alpha', '0.5,2'])
    expect(alpha.code).toBe(2)
    expect(alpha.err.split('\n')[0]).toBe('quarry eval: --alpha takes numbers from 0 to 1 separated by commas; received "2"')
    const broken = write('corpus-broken.jsonl', '{"_id": "a"}\n[1]\n')
    const bad = await runQuarry(['eval', '--corpus', broken, '--queries', queries, '--qrels', qrels, '--embedder', 'hashing'])
    expect(bad).toEqual({ code: 1, out: '', err: `quarry eval: ${broken} line 2: not a JSON object` })
    const unjudged = write('qrels-none.tsv', 'q1\td1\t0\n')
    const none = await runQuarry(['eval', '--corpus', corpus, '--queries', queries, '--qrels', unjudged, '--embedder', 'hashing', '--plot', join(dir, 'none.svg')])
    expect(none).toEqual({ code: 1, out: '', err: `quarry eval: no query in ${queries} has a relevant document (score >= 1) in ${unjudged}` })
    // A plot that cannot be written is refused before any work (it failed at the end, with a raw ENOENT).
    const plot = await runQuarry(['eval', '--corpus', corpus, '--queries', queries, '--qrels', qrels, '--embedder', 'hashing', '--plot', join(dir, 'no-such-folder', 'p.svg')])
    expect(plot).toEqual({ code: 1, out: '', err: `quarry eval: --plot: cannot write into ${join(dir, 'no-such-folder')} (ENOENT); give a path in an existing folder` })
  })

  it('says when the qrels judge a document id the corpus does not hold (a typo scores as a miss)', async () => {
    const typo = write('qrels-typo.tsv', ['q1	d2	1', 'q1	d9	1', 'q2	d3	1', ''].join('\n'))
    const run = await runQuarry(['eval', '--corpus', corpus, '--queries', queries, '--qrels', typo, '--embedder', 'hashing', '--plot', join(dir, 'typo.svg'), '--json'])
    expect(run.code).toBe(0)
    expect(run.err).toBe(`quarry eval: ${typo} judges 1 document id not in ${corpus} ("d9"): they count as misses; check the ids`)
  })
})
