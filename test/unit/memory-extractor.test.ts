import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createHashingEmbedder } from '@quarry/core'
import { MemoryBank, extractFacts, seededRandomId, type ExtractEvent, type Outcome } from '@quarry/adapters'
import { retractedStatement, slotOf } from '../../packages/adapters/src/memory-bank/facts.js'
import { loadPlugin } from '../../packages/adapters/src/cli/plugin-module.js'
import { CliError } from '../../packages/adapters/src/cli/fail.js'
import { runs } from '../support/runs.js'

/**
 * The local extractor (memory-bank/local-extractor.ts) and consolidation (consolidate.ts, facts.ts)
 * against hand-made answers: the exact facts, actions and memory names.
 */
const user = (text: string): ExtractEvent => ({ content: { role: 'user', parts: [{ text }] } })
const model = (text: string): ExtractEvent => ({ content: { role: 'model', parts: [{ text }] } })

describe('the local extractor keeps the user\'s first-person statements', () => {
  it('gives exactly these facts, in order', () => {
    const events: ExtractEvent[] = [
      user('Hi! I live in Paris. What is the weather like?'),
      model('I think it is sunny. My forecast says so.'),
      user('Remember that my daughter is Eva\nI see.'),
      { author: 'user', content: { parts: [{ text: 'Actually, I’m allergic to peanuts!' }] } },
      { author: 'planner', content: { parts: [{ text: 'I am the planner speaking.' }] } },
      user('i live in paris. We love hiking in the Alps'),
      // Neither role nor author (a directContentsSource turn): the user's, as generateContent reads it.
      { content: { parts: [{ text: 'I cycle to work.' }] } },
    ]
    expect(extractFacts(events)).toEqual(['I live in Paris.', 'My daughter is Eva.', 'I’m allergic to peanuts!', 'We love hiking in the Alps.', 'I cycle to work.'])
  })

  it('does not end a sentence at an abbreviation, an initial, or a period before a lower-case word or a digit', () => {
    const events = [user('I live in St. Louis now. I see Dr. Smith weekly. I was born on Jan. 3rd. I read J. R. R. Tolkien, e.g. The Hobbit. Ok. I like tea... We ride bikes! Is it? I am no. 1 here.')]
    expect(extractFacts(events)).toEqual(['I live in St. Louis now.', 'I see Dr. Smith weekly.', 'I was born on Jan. 3rd.', 'I read J. R. R. Tolkien, e.g. The Hobbit.', 'I like tea...', 'We ride bikes!', 'I am no. 1 here.'])
    // Lower-case chat, "no" and "sun" as words, an initial before a first-person word: sentences as written.
    expect(extractFacts([user('i live in paris. my name is bob. i have two cats.')])).toEqual(['I live in paris.', 'My name is bob.', 'I have two cats.'])
    expect(extractFacts([user('No. I live in Paris. Yes, I said no. My name is Ann.')])).toEqual(['I live in Paris.', 'My name is Ann.'])
    expect(extractFacts([user('I love the sun. My dog is Rex. I take vitamin C. My doctor told me.')])).toEqual(['I love the sun.', 'My dog is Rex.', 'I take vitamin C.', 'My doctor told me.'])
  })

  it('a sentence whose fact would be longer than a memory\'s fact may be (10,000 characters) is no fact', () => {
    // "I like " and the words make the sentence; the fact adds a period: 10,000 and 10,001 characters.
    const sentence = (chars: number): string => `I like ${'a'.repeat(chars - 8)}`
    expect(extractFacts([user(sentence(10_000))]).map((f) => f.length)).toEqual([10_000])
    expect(extractFacts([user(`${sentence(10_001)}. I like tea.`)])).toEqual(['I like tea.'])
    // Characters are code points, as createMemory counts them: 10,000 of them in 19,992 code units.
    const emoji = `I like ${'😀'.repeat(9_992)}.`
    expect(extractFacts([user(emoji)])).toEqual([emoji])
    expect(extractFacts([user(`I like ${'😀'.repeat(9_993)}.`)])).toEqual([])
  })

  it('property: never a model turn, never a question, every fact a user sentence\'s words', () => {
    const sentence = fc.tuple(fc.constantFrom('I', 'My cat', 'We', 'You', 'The city', 'Our dog'), fc.constantFrom('like', 'is', 'live in'), fc.constantFrom('tea', 'Paris', 'big'), fc.constantFrom('.', '?', '!', ''))
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.boolean(), fc.array(sentence, { minLength: 1, maxLength: 3 })), { maxLength: 6 }), (turns) => {
        const texts = turns.map(([isUser, ss]) => ({ isUser, text: ss.map(([s, v, o, end]) => `${s} ${v} ${o}${end}`).join(' ') }))
        const facts = extractFacts(texts.map((t) => (t.isUser ? user(t.text) : model(t.text))))
        const userSentences = texts.filter((t) => t.isUser).flatMap((t) => t.text.split(/(?<=[.!?])\s+/))
        // The oracle: a user sentence starting with a first-person word, not a question, with a period added when it has no end mark.
        const candidates = userSentences.filter((s) => /^(I|My|We|Our) /.test(s) && !s.endsWith('?')).map((s) => (/[.!]$/.test(s) ? s : `${s}.`))
        // The first of facts equal but for case and the end mark is kept.
        const key = (f: string): string => f.toLowerCase().replace(/[.!]$/, '')
        const expected = candidates.filter((f, i) => candidates.findIndex((g) => key(g) === key(f)) === i)
        expect(facts).toEqual(expected)
      }),
      { numRuns: runs(100) },
    )
  })
})

describe('the rules consolidation reads', () => {
  it('retractions: what they take back', () => {
    expect(retractedStatement('I no longer live in Paris.')).toBe('i live in paris')
    expect(retractedStatement("I don't eat meat anymore")).toBe('i eat meat')
    expect(retractedStatement("I'm not a vegetarian any more.")).toBe("i'm a vegetarian")
    expect(retractedStatement('My favorite color is no longer blue')).toBe('my favorite color is blue')
    expect(retractedStatement("I don't eat meat")).toBeUndefined()
    expect(retractedStatement('I live in Paris')).toBeUndefined()
  })

  it('slots: one value at a time', () => {
    expect(slotOf('My favorite color is blue.')).toBe('my favorite color is')
    expect(slotOf('My name is Ana')).toBe('my name is')
    expect(slotOf('I live in Paris')).toBe('i live in')
    expect(slotOf('I moved to Berlin.')).toBe('i live in')
    expect(slotOf('I work at Google')).toBe('i work at')
    expect(slotOf('We live in Oslo')).toBe('we live in')
    expect(slotOf('I like cats')).toBeUndefined()
    expect(slotOf('I am a vegetarian')).toBeUndefined()
    expect(slotOf('I eat in restaurants')).toBeUndefined()
  })
})

const ENGINE = 'projects/p/locations/l/reasoningEngines/1'
const scope = { user_id: 'ana' }

function bank(options: ConstructorParameters<typeof MemoryBank>[0] = {}): MemoryBank {
  return new MemoryBank({ embedder: createHashingEmbedder({ dimensions: 256 }), randomId: seededRandomId(5), dense: 'exact', ...options })
}

function ok<T>(outcome: Outcome<T>): T {
  if (!outcome.ok) throw new Error(JSON.stringify(outcome.status))
  return outcome.response
}

type Generated = { response: { generatedMemories?: { memory: { name: string; fact?: string }; action: string }[] } }

async function generate(mb: MemoryBank, events: ExtractEvent[]): Promise<[string, string, string | undefined][]> {
  const op = ok(await mb.generateMemories({ parent: ENGINE, scope, directContentsSource: { events: events.map((e) => ({ content: e.content })) } })) as unknown as Generated
  return (op.response.generatedMemories ?? []).map((g) => [g.action, g.memory.name, g.memory.fact])
}

async function facts(mb: MemoryBank): Promise<string[]> {
  const listed = ok(await mb.listMemories({ parent: ENGINE })) as { memories?: { fact: string }[] }
  return (listed.memories ?? []).map((m) => m.fact).sort()
}

describe('generateMemories from a conversation, consolidated', () => {
  it('CREATED, then UPDATED by the same slot and the same text, then DELETED by a retraction', async () => {
    const mb = bank()
    const first = await generate(mb, [user('I live in Paris. I like green tea. My favorite color is blue.'), model('Noted!')])
    expect(first.map(([a, , f]) => [a, f])).toEqual([
      ['CREATED', 'I live in Paris.'],
      ['CREATED', 'I like green tea.'],
      ['CREATED', 'My favorite color is blue.'],
    ])
    const [paris, tea, color] = first.map(([, name]) => name)
    const second = await generate(mb, [user('I moved to Berlin. My favorite color is green! I like green tea')])
    expect(second).toEqual([
      ['UPDATED', paris, 'I moved to Berlin.'],
      ['UPDATED', color, 'My favorite color is green!'],
      ['UPDATED', tea, 'I like green tea.'],
    ])
    const third = await generate(mb, [user("I don't like green tea anymore. I no longer like jazz.")])
    // The first retraction takes back a memory; the second takes back nothing, so it is a fact like any other.
    expect(third.map(([a, name, f]) => [a, a === 'DELETED' ? name : f])).toEqual([
      ['DELETED', tea],
      ['CREATED', 'I no longer like jazz.'],
    ])
    expect(await facts(mb)).toEqual(['I moved to Berlin.', 'I no longer like jazz.', 'My favorite color is green!'])
  })

  it('a retraction deletes only a memory that says what it takes back: the same text, slot and value, or all its words; never one that is merely similar', async () => {
    // A low threshold: similarity alone would make every one of these memories the target.
    const mb = bank({ consolidationSimilarity: 0.1 })
    const first = await generate(mb, [user('My favorite color is blue. I play tennis on Sundays. I moved to Berlin. I eat meat every day.')])
    const [blue, tennis, berlin, meat] = first.map(([, name]) => name)
    // Nothing here takes back a memory: "red", "golf" and "Tokyo" are not what is held. Such a retraction is stored as
    // said, never put in place of a similar memory or of one of its slot.
    const second = await generate(mb, [user('My favorite color is no longer red. I no longer play golf on Sundays. I no longer live in Tokyo.')])
    expect(second.map(([a, , f]) => [a, f])).toEqual([
      ['CREATED', 'My favorite color is no longer red.'],
      ['CREATED', 'I no longer play golf on Sundays.'],
      ['CREATED', 'I no longer live in Tokyo.'],
    ])
    // These do: the same slot and value ("moved to" fills "live in"), and every word of "i eat meat".
    const third = await generate(mb, [user("I no longer live in Berlin. I don't eat meat anymore. My favorite color is no longer blue.")])
    expect(third.map(([a, name]) => [a, name])).toEqual([
      ['DELETED', berlin],
      ['DELETED', meat],
      ['DELETED', blue],
    ])
    expect(await facts(mb)).toEqual(['I no longer live in Tokyo.', 'I no longer play golf on Sundays.', 'I play tennis on Sundays.', 'My favorite color is no longer red.'])
    expect(tennis).toBeDefined()
    // A memory that negates what a retraction takes back agrees with it: no target. Nor is one a retraction of no words takes back.
    const agree = bank({ consolidationSimilarity: 1 })
    const held = await generate(agree, [user('I never eat meat. I like tea.')])
    const again = await generate(agree, [user("I don't eat meat anymore. No longer anymore.")])
    expect(again.map(([a, , f]) => [a, f])).toEqual([['CREATED', "I don't eat meat anymore."]])
    expect(await facts(agree)).toEqual(["I don't eat meat anymore.", 'I like tea.', 'I never eat meat.'])
    expect(held).toHaveLength(2)
    const empty = ok(await agree.generateMemories({ parent: ENGINE, scope, directMemoriesSource: { directMemories: [{ fact: 'No longer anymore.' }] } })) as unknown as Generated
    expect(empty.response.generatedMemories?.map((g) => [g.action, g.memory.fact])).toEqual([['CREATED', 'No longer anymore.']])
  })

  it('disableConsolidation creates every fact; another scope is never consolidated with', async () => {
    const mb = bank()
    await generate(mb, [user('I live in Paris.')])
    const other = ok(await mb.generateMemories({ parent: ENGINE, scope: { user_id: 'bo' }, directMemoriesSource: { directMemories: [{ fact: 'I live in Rome.' }] } })) as unknown as Generated
    expect(other.response.generatedMemories?.map((g) => g.action)).toEqual(['CREATED'])
    const again = ok(await mb.generateMemories({ parent: ENGINE, scope, disableConsolidation: true, directContentsSource: { events: [{ content: { role: 'user', parts: [{ text: 'I live in Lyon.' }] } }] } })) as unknown as Generated
    expect(again.response.generatedMemories?.map((g) => [g.action, g.memory.fact])).toEqual([['CREATED', 'I live in Lyon.']])
    expect(await facts(mb)).toEqual(['I live in Lyon.', 'I live in Paris.', 'I live in Rome.'])
  })

  it('a conversation without a statement about the user generates nothing', async () => {
    const mb = bank()
    expect(await generate(mb, [user('What time is it?'), model('I am a model.')])).toEqual([])
    expect(await facts(mb)).toEqual([])
  })

  it('an extractor that answers something else than strings is INTERNAL, and nothing is written', async () => {
    const errors: unknown[] = []
    const mb = bank({ extractor: async () => [1, 2] as unknown as string[], onInternalError: (e) => errors.push(e) })
    const outcome = await mb.generateMemories({ parent: ENGINE, scope, directContentsSource: { events: [{ content: { role: 'user', parts: [{ text: 'I live in Paris.' }] } }] } })
    expect(outcome.ok ? 'ok' : outcome.status.code).toBe(13)
    expect(String(errors[0])).toContain('the extractor must resolve to an array of strings')
    expect(await facts(mb)).toEqual([])
  })
})

describe('a fact longer than a memory\'s fact may be (10,000 characters) is never stored', () => {
  const contents = (text: string) => ({ parent: ENGINE, scope, directContentsSource: { events: [{ content: { role: 'user', parts: [{ text }] } }] } })

  it('the local extractor gives none: a million characters in one sentence generate nothing', async () => {
    const mb = bank()
    const op = ok(await mb.generateMemories(contents(`I like ${'tea and '.repeat(125_000)}cake. My name is Ann.`))) as unknown as Generated
    expect(op.response.generatedMemories?.map((g) => g.memory.fact)).toEqual(['My name is Ann.'])
    expect(await facts(mb)).toEqual(['My name is Ann.'])
  })

  it("another extractor's is INTERNAL, saying which fact and how long, and nothing is written", async () => {
    const errors: unknown[] = []
    const long = `I like ${'a'.repeat(9_993)}.`
    const mb = bank({ extractor: async () => ['I like tea.', ' ', long], onInternalError: (e) => errors.push(e) })
    const outcome = await mb.generateMemories(contents('anything'))
    expect(outcome.ok ? 'ok' : [outcome.status.code, outcome.status.message]).toEqual([13, "The extractor gave a fact of 10,001 characters (fact [2] of its answer); a memory's fact holds at most 10,000. Nothing was written."])
    expect(String(errors[0])).toContain("the extractor must resolve to facts of at most 10,000 characters (a memory's fact); its fact [2] has 10,001")
    expect(await facts(mb)).toEqual([])
  })

  it('one of 10,000 characters is stored, counted in code points as createMemory counts them; a blank one is dropped, however long', async () => {
    const atCap = [`I like ${'a'.repeat(9_992)}.`, `I like ${'😀'.repeat(9_992)}.`]
    const mb = bank({ extractor: async () => [...atCap, ' '.repeat(20_000)], onInternalError: (e) => { throw e } })
    const op = ok(await mb.generateMemories({ ...contents('anything'), disableConsolidation: true })) as unknown as Generated
    expect(op.response.generatedMemories?.map((g) => g.memory.fact)).toEqual(atCap)
  })
})

describe("an engine's ttlConfig sets the expiry of what is written", () => {
  const t0 = Date.parse('2026-05-01T00:00:00Z')
  async function engineWith(ttlConfig: Record<string, unknown>): Promise<{ mb: MemoryBank; name: string }> {
    const mb = bank({ clock: () => new Date(t0) })
    const op = ok(await mb.reasoningEngines.createReasoningEngine({ parent: 'projects/p/locations/l', reasoningEngine: { displayName: 'e', contextSpec: { memoryBankConfig: { ttlConfig } } } })) as unknown as { response: { name: string } }
    return { mb, name: op.response.name }
  }
  const expiry = (op: unknown): string | undefined => (op as { response: { expireTime?: string } }).response.expireTime
  const generatedExpiry = (op: unknown): (string | undefined)[] => (op as { response: { generatedMemories: { memory: { expireTime?: string } }[] } }).response.generatedMemories.map((g) => g.memory.expireTime)

  it('defaultTtl: every create and generate; an explicit ttl wins', async () => {
    const { mb, name } = await engineWith({ defaultTtl: '3600s' })
    expect(expiry(ok(await mb.createMemory({ parent: name, memory: { fact: 'I like tea', scope } })))).toBe('2026-05-01T01:00:00.000Z')
    expect(expiry(ok(await mb.createMemory({ parent: name, memory: { fact: 'I like jazz', scope, ttl: '60s' } })))).toBe('2026-05-01T00:01:00.000Z')
    expect(generatedExpiry(ok(await mb.generateMemories({ parent: name, scope, directMemoriesSource: { directMemories: [{ fact: 'I live in Oslo.' }] } })))).toEqual(['2026-05-01T01:00:00.000Z'])
  })

  it('granularTtlConfig: createTtl, generateCreatedTtl and generateUpdatedTtl apart', async () => {
    const { mb, name } = await engineWith({ granularTtlConfig: { createTtl: '60s', generateCreatedTtl: '120s', generateUpdatedTtl: '180s' } })
    expect(expiry(ok(await mb.createMemory({ parent: name, memory: { fact: 'I like tea', scope } })))).toBe('2026-05-01T00:01:00.000Z')
    const direct = (fact: string) => mb.generateMemories({ parent: name, scope, directMemoriesSource: { directMemories: [{ fact }] } })
    expect(generatedExpiry(ok(await direct('I live in Oslo.')))).toEqual(['2026-05-01T00:02:00.000Z'])
    expect(generatedExpiry(ok(await direct('I live in Bergen.')))).toEqual(['2026-05-01T00:03:00.000Z'])
  })

  it('an implicit engine (never created) applies none', async () => {
    const mb = bank({ clock: () => new Date(t0) })
    expect(expiry(ok(await mb.createMemory({ parent: ENGINE, memory: { fact: 'I like tea', scope } })))).toBeUndefined()
  })
})

describe('--extractor MODULE: the plug-in is checked as it loads', () => {
  const usage = 'usage: quarry serve'
  const spec = { flag: '--extractor', exportName: 'extractor', usage }
  it('takes the default export, else the named one; refuses a missing file, a broken module and one without a function', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'quarry-extractor-'))
    try {
      writeFileSync(join(dir, 'default.mjs'), 'export default async () => ["A"]\n')
      writeFileSync(join(dir, 'named.mjs'), 'export const extractor = async () => ["B"]\n')
      writeFileSync(join(dir, 'none.mjs'), 'export const other = 1\n')
      writeFileSync(join(dir, 'broken.mjs'), 'export default (\n')
      expect(await (await loadPlugin(join(dir, 'default.mjs'), spec))()).toEqual(['A'])
      expect(await (await loadPlugin(join(dir, 'named.mjs'), spec))()).toEqual(['B'])
      const failure = async (file: string): Promise<[number, string]> => {
        const e = await loadPlugin(join(dir, file), spec).then(() => undefined, (x: unknown) => x)
        expect(e).toBeInstanceOf(CliError)
        return [(e as CliError).exitCode, (e as CliError).message.replace(dir, 'DIR')]
      }
      expect(await failure('missing.mjs')).toEqual([2, '--extractor DIR/missing.mjs: no such file; give the path of an ES module (.mjs or .js)'])
      expect(await failure('none.mjs')).toEqual([2, '--extractor DIR/none.mjs must export a function, as its default export or as "extractor"; it exports other'])
      const [code, message] = await failure('broken.mjs')
      expect([code, message.startsWith('--extractor DIR/broken.mjs could not be loaded: ')]).toEqual([2, true])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
