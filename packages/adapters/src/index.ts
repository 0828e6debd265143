// @quarry/adapters public API. Every export is listed by name.
export { runCli } from './cli/main.js'
export { runWordDemo } from './cli/demo-words.js'
export { runDocsDemo, runQuery, buildDemoIndex, demoIndexDir } from './cli/demo-docs.js'
export { packageDocs } from './cli/package-docs.js'
export type { PackageDoc } from './cli/package-docs.js'
