import type { Embedder } from '@quarry/core'
import { MemoryBankServiceClient } from '../memory-bank/client.js'
import { seededRandomId } from '../rpc/names.js'
import { renderTable, scoreHeader } from './table.js'

const ENGINE = 'projects/demo/locations/us-central1/reasoningEngines/1'

/**
 * Memory Bank in process: facts for two users through generateMemories (a repeated fact is
 * consolidated, not twinned), then retrieveMemories by similarity, which only ever sees one scope.
 */
export async function runMemoryBankDemo(embedder: Embedder): Promise<void> {
  const client = new MemoryBankServiceClient({ embedder, randomId: seededRandomId(1) })
  const facts: Record<string, string[]> = {
    ana: ['I prefer green tea to coffee.', 'My dog is called Rex.', 'I am learning the cello.', 'I live in Lyon.'],
    ben: ['I drink espresso every morning.', 'I have two cats.', 'I live in Porto.'],
  }
  for (const [user, list] of Object.entries(facts)) {
    await client.generateMemories({ parent: ENGINE, scope: { user_id: user }, directMemoriesSource: { directMemories: list.map((fact) => ({ fact })) } })
  }
  const [op] = await client.generateMemories({ parent: ENGINE, scope: { user_id: 'ana' }, directMemoriesSource: { directMemories: [{ fact: 'i prefer green tea to coffee' }] } })
  const [result] = await op.promise()
  console.log(`\ngenerateMemories again with "i prefer green tea to coffee" for ana → ${(result.generatedMemories ?? []).map((g) => g.action).join(', ')} (consolidated, no twin)`)
  for (const user of ['ana', 'ben']) {
    const [response] = await client.retrieveMemories({ parent: ENGINE, scope: { user_id: user }, similaritySearchParams: { searchQuery: 'what does the user drink?', topK: 2 } })
    console.log(`\nretrieveMemories {"scope": {"user_id": "${user}"}, "similaritySearchParams": {"searchQuery": "what does the user drink?", "topK": 2}}`)
    const rows = (response.retrievedMemories ?? []).map((r, i) => [i + 1, r.distance ?? '', r.memory.fact])
    console.log(
      renderTable(['rank', scoreHeader('distance', 'lower'), 'fact'], rows)
        .split('\n')
        .map((line) => `  ${line}`)
        .join('\n'),
    )
  }
}
