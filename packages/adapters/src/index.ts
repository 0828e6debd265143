// @quarry/adapters public API. Every export is listed by name.
export { runCli } from './cli/main.js'
export { runWordDemo } from './cli/demo-words.js'
