// @ts-check
// Every call the console makes goes through here: Google's REST paths on this server, answers as data.

/** @typedef {{ code: number, message: string, status: string, details?: unknown[] }} ApiError */
/** @typedef {{ ok: true, json: any } | { ok: false, error: ApiError }} Answer */
/** @typedef {{ method: string, path: string, body?: unknown }} RestCall */

/**
 * Google's error JSON, or one made from what came back when the answer is not that shape.
 * @param {number} httpStatus
 * @param {unknown} json
 * @returns {ApiError}
 */
function errorOf(httpStatus, json) {
  const error = json && typeof json === 'object' && 'error' in json ? /** @type {{ error: unknown }} */ (json).error : undefined
  if (error && typeof error === 'object' && 'message' in error) {
    const e = /** @type {Partial<ApiError>} */ (error)
    return { code: Number(e.code ?? httpStatus), message: String(e.message), status: String(e.status ?? ''), ...(e.details ? { details: e.details } : {}) }
  }
  return { code: httpStatus, message: `HTTP ${httpStatus} with no error message`, status: 'UNKNOWN' }
}

/**
 * Sends one request and reads its JSON answer; never throws.
 * @param {RestCall} call
 * @returns {Promise<Answer>}
 */
export async function send(call) {
  /** @type {RequestInit} */
  const init = { method: call.method, headers: call.body === undefined ? {} : { 'content-type': 'application/json' } }
  if (call.body !== undefined) init.body = JSON.stringify(call.body)
  return answerOf(fetch(call.path, init))
}

/**
 * @param {Promise<Response>} pending
 * @returns {Promise<Answer>}
 */
async function answerOf(pending) {
  try {
    const response = await pending
    const text = await response.text()
    /** @type {unknown} */
    let json = {}
    try {
      json = text === '' ? {} : JSON.parse(text)
    } catch {
      return { ok: false, error: { code: response.status, message: `the server answered ${response.status} with a body that is not JSON`, status: 'UNKNOWN' } }
    }
    if (!response.ok) return { ok: false, error: errorOf(response.status, json) }
    return { ok: true, json }
  } catch (error) {
    return { ok: false, error: { code: 0, message: `the server could not be reached (${error instanceof Error ? error.message : String(error)})`, status: 'UNAVAILABLE' } }
  }
}

/**
 * @param {string} path
 * @param {Record<string, string | undefined>} [query]
 */
export function get(path, query = {}) {
  return send({ method: 'GET', path: withQuery(path, query) })
}

/**
 * @param {string} path
 * @param {Record<string, string | undefined>} query
 */
export function withQuery(path, query) {
  const params = new URLSearchParams()
  for (const [key, value] of Object.entries(query)) if (value !== undefined && value !== '') params.set(key, value)
  const text = params.toString()
  return text === '' ? path : `${path}?${text}`
}

/**
 * A long-running operation's end: polled until `done` (Quarry answers most already done).
 * @param {Answer} started
 * @param {string} version
 * @returns {Promise<Answer>}
 */
export async function finished(started, version) {
  let answer = started
  for (let i = 0; answer.ok && !answer.json.done && i < 600; i++) {
    await new Promise((resolve) => setTimeout(resolve, 200))
    answer = await get(`/${version}/${answer.json.name}`)
  }
  if (!answer.ok) return answer
  if (answer.json.error) return { ok: false, error: errorOf(400, { error: answer.json.error }) }
  return { ok: true, json: answer.json.response ?? {} }
}

/**
 * Uploads one file into a RAG corpus: the multipart body (a "metadata" JSON part, a "file" part)
 * at /upload/v1beta1/{corpus}/ragFiles:upload.
 * @param {string} corpus
 * @param {File} file
 * @returns {Promise<Answer>}
 */
export async function uploadRagFile(corpus, file) {
  const form = new FormData()
  form.append('metadata', new Blob([JSON.stringify({ ragFile: { displayName: file.name } })], { type: 'application/json' }))
  form.append('file', file, file.name)
  const answer = await answerOf(fetch(`/upload/v1beta1/${corpus}/ragFiles:upload`, { method: 'POST', body: form }))
  // The upload answers 200 with { error } when the file itself was refused.
  if (answer.ok && answer.json.error) return { ok: false, error: errorOf(400, { error: answer.json.error }) }
  return answer
}
