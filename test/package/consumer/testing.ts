// The ./testing entries, which import fast-check (an optional peer dependency): prints their
// export names (`node testing.js`), compared with the workspace's.
import * as coreTesting from '@quarry/core/testing'
import * as adaptersTesting from '@quarry/adapters/testing'

export function testingExports(): { core: string[]; adapters: string[] } {
  return { core: Object.keys(coreTesting).sort(), adapters: Object.keys(adaptersTesting).sort() }
}

if (process.argv[2] === 'print') console.log(JSON.stringify(testingExports()))
