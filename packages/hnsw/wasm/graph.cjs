'use strict'
// The WebAssembly Graph: the class of @quarry/hnsw's index.d.ts over quarry_hnsw.wasm's C ABI
// (graph.cc). Nothing here needs Node: index.cjs gives node:fs for saving and reading open files, a
// browser gives none (save, saveSync and load(fd, size) then refuse). The same argument checks and
// messages as the native class (src/graph.cc), so callers read the same errors from either.

const WASI_EBADF = 8

function kind(value) {
  return ArrayBuffer.isView(value) ? value[Symbol.toStringTag] : undefined
}

/** src/graph.cc's TypedData: a typed array of that kind and at least `minLength` long. */
function typed(value, type, minLength, what) {
  if (kind(value) !== type) throw new TypeError(what)
  if (value.length < minLength) throw new RangeError(what)
  return value
}

/** src/graph.cc's Count: a uint32. */
function count(value, what) {
  if (typeof value !== 'number') throw new TypeError(what)
  if (!(value >= 0 && value <= 0xffffffff && Math.floor(value) === value)) throw new RangeError(what)
  return value
}

/**
 * The imports quarry_hnsw.wasm asks for: the two byte streams of graph.cc, memory growth (which
 * detaches every view of the memory), and the few WASI calls libc++ links but a graph never makes
 * (std::cerr's writes are dropped; files do not exist).
 */
function makeImports(state) {
  return {
    env: {
      // Pointers arrive as signed i32: past 2 GB of memory they are negative until made unsigned.
      quarry_read: (ptr, n) => state.io.read(ptr >>> 0, n >>> 0),
      quarry_write: (ptr, n) => state.io.write(ptr >>> 0, n >>> 0),
      emscripten_notify_memory_growth: () => {
        state.u8 = undefined
      },
    },
    wasi_snapshot_preview1: {
      proc_exit: (code) => {
        throw new Error(`quarry_hnsw.wasm stopped (exit ${code})`)
      },
      fd_write: (fd, iovs, iovsLength, written) => {
        const view = new DataView(state.memory.buffer)
        let total = 0
        for (let i = 0; i < iovsLength; i++) total += view.getUint32((iovs >>> 0) + 8 * i + 4, true)
        view.setUint32(written >>> 0, total, true)
        return 0
      },
      fd_close: () => WASI_EBADF,
      fd_seek: () => WASI_EBADF,
      fd_read: () => WASI_EBADF,
      environ_sizes_get: (countPtr, sizePtr) => {
        const view = new DataView(state.memory.buffer)
        view.setUint32(countPtr >>> 0, 0, true)
        view.setUint32(sizePtr >>> 0, 0, true)
        return 0
      },
      environ_get: () => 0,
    },
  }
}

const noIo = {
  read: () => -1,
  write: () => -1,
}

/** The Graph class over an instance made with makeImports(state); `fs` is node:fs or undefined. */
function graphClass(instance, state, fs) {
  const x = instance.exports
  state.memory = x.memory
  if (typeof x._initialize === 'function') x._initialize()

  const heap = () => {
    if (state.u8 === undefined || state.u8.buffer !== state.memory.buffer) {
      const buffer = state.memory.buffer
      state.u8 = new Uint8Array(buffer)
      state.u32 = new Uint32Array(buffer)
      state.f32 = new Float32Array(buffer)
    }
    return state
  }

  // One scratch block for what crosses into wasm (a query, a vector, answers, a filter's words):
  // calls are synchronous, so every graph shares it.
  let scratch = 0
  let scratchBytes = 0
  const room = (bytes) => {
    if (bytes > scratchBytes) {
      if (scratch !== 0) x.free(scratch)
      scratchBytes = Math.max(bytes, 2 * scratchBytes, 4096)
      scratch = x.malloc(scratchBytes) >>> 0
      if (scratch === 0) {
        scratchBytes = 0
        throw new Error('not enough memory for the graph')
      }
    }
    return scratch
  }

  const message = () => {
    const { u8 } = heap()
    const at = x.quarry_error() >>> 0
    let end = at
    while (u8[end] !== 0) end++
    return new TextDecoder().decode(u8.subarray(at, end))
  }

  /** Runs a call that returns 1 on refusal with its stream set; throws what the native class throws. */
  const guarded = (io, call) => {
    state.io = io
    try {
      if (call() !== 0) {
        if (io.error !== undefined && io.reading) throw new Error(`it could not be read (${io.error.code ?? 'EIO'})`)
        if (io.error !== undefined) throw io.error
        throw new Error(message())
      }
    } finally {
      state.io = noIo
    }
  }

  const needFs = (what) => {
    if (fs === undefined) throw new Error(`${what} needs node:fs; in a browser, keep the graph's bytes another way`)
    return fs
  }

  /** Streams the graph's bytes to `take(bytes)`, each a view of wasm memory valid only during the call. */
  const writeOut = (handle, take) => {
    const io = {
      error: undefined,
      read: () => -1,
      write: (ptr, n) => {
        try {
          take(heap().u8.subarray(ptr, ptr + n))
          return n
        } catch (error) {
          io.error = error
          return -1
        }
      },
    }
    guarded(io, () => x.quarry_save(handle))
  }

  const registry = new FinalizationRegistry((handle) => x.quarry_free(handle))

  class Graph {
    #handle
    #dim

    constructor(space, dim) {
      const name = typeof space === 'string' ? space : ''
      this.#dim = count(dim, 'dim must be a positive integer')
      if (this.#dim === 0) throw new RangeError('dim must be a positive integer')
      if (name !== 'l2' && name !== 'ip') throw new TypeError("space must be 'l2' or 'ip'")
      const handle = x.quarry_new(name === 'l2' ? 1 : 0, this.#dim)
      if (handle === 0) throw new Error('not enough memory for the graph')
      this.#handle = handle
      registry.register(this, handle)
    }

    #ready() {
      if (x.quarry_ready(this.#handle) === 0) throw new Error('the graph has not been initialized or loaded')
      return this.#handle
    }

    init(maxElements, m, efConstruction, seed) {
      const a = count(maxElements, 'maxElements must be an integer')
      const b = count(m, 'm must be an integer')
      const c = count(efConstruction, 'efConstruction must be an integer')
      const d = count(seed, 'seed must be an integer')
      guarded(noIo, () => x.quarry_init(this.#handle, a, b, c, d))
    }

    load(source, size) {
      let io
      let total
      if (typeof source === 'number') {
        const fd = count(source, 'fd must be a file descriptor')
        const n = typeof size === 'number' ? size : -1
        if (!(n >= 0 && n <= Number.MAX_SAFE_INTEGER && Math.floor(n) === n)) throw new RangeError('size must be a byte count')
        const files = needFs('load(fd, size)')
        let position = 0
        total = n
        io = {
          reading: true,
          error: undefined,
          read: (ptr, want) => {
            try {
              const got = files.readSync(fd, heap().u8, ptr, want, position)
              position += got
              return got
            } catch (error) {
              io.error = error
              return -1
            }
          },
          write: () => -1,
        }
      } else {
        const bytes = typed(source, 'Uint8Array', 0, 'bytes must be a Uint8Array (or give a file descriptor and a size)')
        let at = 0
        total = bytes.length
        io = {
          reading: true,
          error: undefined,
          read: (ptr, want) => {
            const n = Math.min(want, bytes.length - at)
            heap().u8.set(bytes.subarray(at, at + n), ptr)
            at += n
            return n
          },
          write: () => -1,
        }
      }
      guarded(io, () => x.quarry_load(this.#handle, total))
    }

    saveSync(path) {
      const handle = this.#ready()
      const files = needFs('saveSync')
      const fd = files.openSync(path, 'w')
      try {
        writeOut(handle, (bytes) => {
          for (let at = 0; at < bytes.length; ) at += files.writeSync(fd, bytes, at, bytes.length - at)
        })
      } finally {
        files.closeSync(fd)
      }
    }

    /** Copies the graph's bytes now (so it may change at once), then writes them off the thread. */
    save(path) {
      const handle = this.#ready()
      const files = needFs('save')
      const parts = []
      writeOut(handle, (bytes) => parts.push(bytes.slice()))
      return files.promises.writeFile(path, parts)
    }

    resize(maxElements) {
      const n = count(maxElements, 'maxElements must be an integer')
      const handle = this.#ready()
      guarded(noIo, () => x.quarry_resize(handle, n))
    }

    add(vector, label) {
      const v = typed(vector, 'Float32Array', this.#dim, "vector must be a Float32Array of the graph's dimensions")
      const l = count(label, 'label must be a uint32')
      const handle = this.#ready()
      const at = room(4 * this.#dim)
      heap().f32.set(v.length === this.#dim ? v : v.subarray(0, this.#dim), at >>> 2)
      guarded(noIo, () => x.quarry_add(handle, at, l))
    }

    markDelete(label) {
      const l = count(label, 'label must be a uint32')
      const handle = this.#ready()
      guarded(noIo, () => x.quarry_mark_delete(handle, l))
    }

    setEf(ef) {
      const handle = this.#ready()
      x.quarry_set_ef(handle, count(ef, 'ef must be an integer'))
    }

    search(query, k, labels, distances, allow) {
      const dim = this.#dim
      const q = typed(query, 'Float32Array', dim, "query must be a Float32Array of the graph's dimensions")
      const n = count(k, 'k must be an integer')
      const outLabels = typed(labels, 'Uint32Array', n, 'labels must be a Uint32Array of at least k elements')
      const outDistances = typed(distances, 'Float32Array', n, 'distances must be a Float32Array of at least k elements')
      const handle = this.#ready()
      const words = allow === undefined ? undefined : typed(allow, 'Uint32Array', 0, 'allow must be a Uint32Array')
      if (n === 0) return 0
      // [query: dim floats][labels: k][distances: k][allow: words]
      const wordCount = words === undefined ? 0 : words.length
      const base = room(4 * (dim + 2 * n + wordCount))
      const qAt = base >>> 2
      const labelsAt = qAt + dim
      const distancesAt = labelsAt + n
      const allowAt = distancesAt + n
      let h = heap()
      h.f32.set(q.length === dim ? q : q.subarray(0, dim), qAt)
      if (words !== undefined) h.u32.set(words, allowAt)
      const found = x.quarry_search(handle, 4 * qAt, n, 4 * labelsAt, 4 * distancesAt, words === undefined ? 0 : 4 * allowAt, wordCount)
      if (found < 0) throw new Error(message())
      h = heap()
      outLabels.set(h.u32.subarray(labelsAt, labelsAt + found))
      outDistances.set(h.f32.subarray(distancesAt, distancesAt + found))
      return found
    }

    maxElements() {
      return x.quarry_max_elements(this.#ready())
    }

    size() {
      return x.quarry_size(this.#ready())
    }
  }

  return Graph
}

/** The Graph class from quarry_hnsw.wasm's bytes or compiled module, synchronously (Node). */
function instantiateSync(wasm, fs) {
  const module = wasm instanceof WebAssembly.Module ? wasm : new WebAssembly.Module(wasm)
  const state = { io: noIo }
  const instance = new WebAssembly.Instance(module, makeImports(state))
  return { Graph: graphClass(instance, state, fs), memoryBytes: () => state.memory.buffer.byteLength }
}

/**
 * The same, asynchronously: what a browser uses, which may not compile a module this size on its
 * main thread synchronously. `wasm` is quarry_hnsw.wasm's bytes (e.g. from fetch) or its module.
 */
async function instantiate(wasm, fs) {
  const module = wasm instanceof WebAssembly.Module ? wasm : await WebAssembly.compile(wasm)
  const state = { io: noIo }
  const instance = await WebAssembly.instantiate(module, makeImports(state))
  return { Graph: graphClass(instance, state, fs), memoryBytes: () => state.memory.buffer.byteLength }
}

module.exports = { instantiate, instantiateSync }
