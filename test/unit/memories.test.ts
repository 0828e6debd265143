import { describe, expect, it } from 'vitest'
import { createHashingEmbedder } from '@quarry/core'
import { MemoryBank, type Outcome } from '@quarry/adapters'
import { done, failed } from '../support/rpc-failure.js'

/** Memory Bank's memories (memories.ts, revisions.ts, generate.ts) at their edges. */
const embedder = createHashingEmbedder({ dimensions: 16 })
const E = 'projects/p/locations/l/reasoningEngines/1'

async function names(bank: MemoryBank): Promise<string[]> {
  const listed = await bank.listMemories({ parent: E })
  return listed.ok ? (listed.response.memories ?? []).map((m) => m.name) : []
}

describe('memory ids', () => {
  it('a memoryId ends with a letter or digit, as CreateMemoryRequest.memory_id says', async () => {
    const bank = new MemoryBank({ embedder })
    // "The first character must be a letter, and the last character must be a letter or number."
    for (const memoryId of ['abc-', '9lives', 'Abc', 'a'.repeat(64)]) {
      expect(failed(await bank.createMemory({ parent: E, memoryId, memory: { fact: 'x', scope: { u: '1' } } }))).toEqual({
        code: 3,
        field: 'memoryId',
        message: `memoryId: memoryId is up to 63 of a-z, 0-9 and -, starting with a letter and ending with a letter or digit; received "${memoryId}".`,
      })
    }
    expect(await names(bank)).toEqual([])
    for (const memoryId of ['a', 'a-1', `a${'b'.repeat(62)}`]) expect(done<{ name: string }>(await bank.createMemory({ parent: E, memoryId, memory: { fact: 'x', scope: { u: '1' } } })).name).toBe(`${E}/memories/${memoryId}`)
  })

  it('a name of a valid form naming no memory is NOT_FOUND, a numeric id (as Google generates) included', async () => {
    const bank = new MemoryBank({ embedder })
    await bank.createMemory({ parent: E, memoryId: 'tea', memory: { fact: 'x', scope: { u: '1' } } })
    // "tea-" too: an earlier Quarry took such a memoryId, and its memories stay addressable.
    for (const id of ['123', 'm123', 'tea-2', 'tea-']) {
      expect(failed(await bank.getMemory({ name: `${E}/memories/${id}` }))).toEqual({ code: 5, field: undefined, message: `Memory "${E}/memories/${id}" not found.` })
      expect(failed(await bank.deleteMemory({ name: `${E}/memories/${id}` })).code).toBe(5)
      expect(failed(await bank.listMemoryRevisions({ parent: `${E}/memories/${id}` })).code).toBe(5)
    }
    // A name no memory can have is malformed.
    for (const id of ['-abc', 'A1', 'a_b']) expect(failed(await bank.getMemory({ name: `${E}/memories/${id}` }))).toMatchObject({ code: 3, field: 'name' })
  })
})

describe('rollback', () => {
  it('refuses a targetRevisionId that is not a positive integer as INVALID_ARGUMENT, changing nothing', async () => {
    const bank = new MemoryBank({ embedder })
    const memory = done<{ name: string }>(await bank.createMemory({ parent: E, memoryId: 'tea', memory: { fact: 'I like green tea.', scope: { u: '1' } } }))
    await bank.updateMemory({ memory: { name: memory.name, fact: 'I like black tea.' }, updateMask: 'fact' })
    for (const targetRevisionId of ['-1', -2]) {
      expect(failed(await bank.rollbackMemory({ name: memory.name, targetRevisionId }))).toEqual({
        code: 3,
        field: 'targetRevisionId',
        message: `targetRevisionId: targetRevisionId is a revision's id, a positive integer (the last part of its name); received ${targetRevisionId}.`,
      })
    }
    // A positive id that names no revision is NOT_FOUND, as before.
    expect(failed(await bank.rollbackMemory({ name: memory.name, targetRevisionId: '7' })).code).toBe(5)
    const after = await bank.getMemory({ name: memory.name })
    expect(after.ok && after.response.fact).toBe('I like black tea.')
    const revisions = await bank.listMemoryRevisions({ parent: memory.name })
    expect(revisions.ok && revisions.response.memoryRevisions?.map((r) => r.fact)).toEqual(['I like black tea.', 'I like green tea.'])
  })
})

describe('generateMemories from directContentsSource', () => {
  const generate = (bank: MemoryBank, content: unknown): Promise<Outcome<unknown>> => bank.generateMemories({ parent: E, scope: { u: '1' }, directContentsSource: { events: [{ content: { role: 'user', parts: [{ text: 'I drink tea.' }] } }, { content }] } })

  it('reads each content as generateContent reads a turn, refusing a malformed one and writing nothing', async () => {
    const bank = new MemoryBank({ embedder })
    const at = 'directContentsSource.events[1].content'
    // Each was answered 200 with nothing generated (the content was kept as given, unread).
    expect(failed(await generate(bank, { role: 'user', parts: 'oops' }))).toEqual({ code: 3, field: `${at}.parts`, message: `Invalid value at '${at}.parts': expected a list; received "oops".` })
    expect(failed(await generate(bank, { role: 'user', parts: [{ text: 123 }] }))).toEqual({ code: 3, field: `${at}.parts[0].text`, message: `Invalid value at '${at}.parts[0].text' (TYPE_STRING), 123` })
    expect(failed(await generate(bank, { role: 'user', parts: [{ bogus: 'x' }] }))).toEqual({ code: 3, field: `${at}.parts[0]`, message: `Invalid JSON payload received. Unknown name "bogus" at '${at}.parts[0]': Cannot find field.` })
    expect(failed(await generate(bank, { role: 'user', parts: [] }))).toMatchObject({ code: 3, field: `${at}.parts` })
    expect(failed(await generate(bank, { role: 'user', parts: [{ thought: true }] }))).toMatchObject({ code: 3, field: `${at}.parts[0]` })
    expect(failed(await generate(bank, { role: 'robot', parts: [{ text: 'I live in Paris.' }] }))).toEqual({ code: 3, field: `${at}.role`, message: `${at}.role: Please use a valid role: user, model; received "robot".` })
    expect(await names(bank)).toEqual([])
  })

  it("takes a turn without a role as the user's, as generateContent does", async () => {
    const bank = new MemoryBank({ embedder })
    // content.proto: the role is "Useful to set for multi-turn conversations, otherwise can be left blank or unset".
    const generated = done<{ generatedMemories: { action: string; memory: { fact: string } }[] }>(await generate(bank, { parts: [{ text: 'I live in Paris.' }] }))
    expect(generated.generatedMemories.map((g) => [g.action, g.memory.fact])).toEqual([
      ['CREATED', 'I drink tea.'],
      ['CREATED', 'I live in Paris.'],
    ])
    // The model's turns are not the user's.
    const model = done<{ generatedMemories?: unknown[] }>(await bank.generateMemories({ parent: E, scope: { u: '2' }, directContentsSource: { events: [{ content: { role: 'model', parts: [{ text: 'I am a helpful assistant.' }] } }] } }))
    expect(model.generatedMemories).toBeUndefined()
  })
})
