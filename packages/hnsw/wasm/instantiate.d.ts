// `@quarry/hnsw/wasm/instantiate`: the WebAssembly graph without Node (a browser, a worker): pass
// the bytes of `@quarry/hnsw/wasm/quarry_hnsw.wasm`, fetched as the page sees fit.
export { instantiate } from './index.js'
