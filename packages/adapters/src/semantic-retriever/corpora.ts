import { createIndex, LinkableFile } from '@quarry/core'
import { parseName, derivedId } from '../rpc/names.js'
import { omitUndefined, omitUnset } from '../rpc/omit.js'
import { pageOf } from '../rpc/paging.js'
import { readMessage } from '../rpc/proto-json.js'
import { failure } from '../rpc/status.js'
import { CORPUS_NAME, checkUpdateMask, type RetrieverContext } from './context.js'
import type { CorpusJson, EmptyJson, ListCorporaResponseJson } from './resources.js'
import { CreateCorpusRequest, DeleteCorpusRequest, GetCorpusRequest, ListCorporaRequest, UpdateCorpusRequest } from './schema.js'
import { corpusJson, type CorpusState } from './state.js'

export async function createCorpus(ctx: RetrieverContext, request: unknown): Promise<CorpusJson> {
  const { corpus = {} } = readMessage(CreateCorpusRequest, request)
  const displayName = ctx.checkDisplayName(corpus.displayName, 'corpus.displayName')
  const { corpora } = ctx.state
  let name: string
  if (corpus.name !== undefined) {
    name = parseName(corpus.name, CORPUS_NAME, 'corpus.name').name
    if (corpora.has(name)) throw failure('ALREADY_EXISTS', `Corpus "${name}" already exists.`, 'corpus.name')
  } else {
    do name = `corpora/${derivedId(displayName, ctx.options.randomId)}`
    while (corpora.has(name))
  }
  if (corpora.size >= ctx.options.limits.corpora) {
    throw failure('RESOURCE_EXHAUSTED', `A project holds at most ${ctx.options.limits.corpora} corpora; delete one before creating another.`)
  }
  const { embedder, dense, hnsw, planner } = ctx.options
  const index = createIndex(omitUndefined({ dimensions: embedder.dimensions, metric: 'cosine', dense, embedder, hnsw, planner }))
  const state: CorpusState = { name, displayName, index, documents: new Map(), documentsFile: new LinkableFile(), chunkCount: 0, ...ctx.stamp() }
  corpora.set(name, state)
  return corpusJson(state)
}

export async function getCorpus(ctx: RetrieverContext, request: unknown): Promise<CorpusJson> {
  const { name } = readMessage(GetCorpusRequest, request)
  return corpusJson(ctx.corpus(name, 'name'))
}

export async function updateCorpus(ctx: RetrieverContext, request: unknown): Promise<CorpusJson> {
  const { corpus = {}, updateMask } = readMessage(UpdateCorpusRequest, request)
  const target = ctx.corpus(corpus.name, 'corpus.name')
  const paths = checkUpdateMask(updateMask, ['displayName'], 'corpus')
  if (paths.has('displayName')) target.displayName = ctx.checkDisplayName(corpus.displayName, 'corpus.displayName')
  target.updateMs = ctx.now()
  return corpusJson(target)
}

export async function deleteCorpus(ctx: RetrieverContext, request: unknown): Promise<EmptyJson> {
  const { name, force = false } = readMessage(DeleteCorpusRequest, request)
  const corpus = ctx.corpus(name, 'name')
  if (corpus.documents.size > 0 && !force) {
    throw failure('FAILED_PRECONDITION', `Corpus "${corpus.name}" holds ${corpus.documents.size} document(s); delete them first or pass force: true to delete them with it.`, 'force')
  }
  ctx.state.corpora.delete(corpus.name)
  return {}
}

export async function listCorpora(ctx: RetrieverContext, request: unknown): Promise<ListCorporaResponseJson> {
  const req = readMessage(ListCorporaRequest, request)
  const page = pageOf([...ctx.state.corpora.values()], (c) => c.seq, 'listCorpora', req, { defaultSize: 10, maxSize: 20 })
  return omitUnset({ corpora: page.items.map(corpusJson), nextPageToken: page.nextPageToken })
}
