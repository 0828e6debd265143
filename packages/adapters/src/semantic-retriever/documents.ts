import { derivedId, parseName } from '../rpc/names.js'
import { omitUnset } from '../rpc/omit.js'
import { pageOf } from '../rpc/paging.js'
import { readMessage } from '../rpc/proto-json.js'
import { failure, invalidArgument } from '../rpc/status.js'
import { DOCUMENT_NAME, checkUpdateMask, type RetrieverContext } from './context.js'
import { chunkMetadata, readCustomMetadata } from './custom-metadata.js'
import type { DocumentJson, EmptyJson, ListDocumentsResponseJson } from './resources.js'
import { CreateDocumentRequest, DeleteDocumentRequest, GetDocumentRequest, ListDocumentsRequest, UpdateDocumentRequest } from './schema.js'
import { documentJson, type CorpusState, type DocumentState } from './state.js'

export async function createDocument(ctx: RetrieverContext, request: unknown): Promise<DocumentJson> {
  const { parent, document = {} } = readMessage(CreateDocumentRequest, request)
  const corpus = ctx.corpus(parent, 'parent')
  const displayName = ctx.checkDisplayName(document.displayName, 'document.displayName')
  const customMetadata = readCustomMetadata(document.customMetadata, 'document.customMetadata', ctx.options.limits.customMetadata)
  let name: string
  if (document.name !== undefined) {
    const parsed = parseName(document.name, DOCUMENT_NAME, 'document.name')
    if (parsed.parent !== corpus.name) throw invalidArgument('document.name', `document.name "${parsed.name}" is not in the parent corpus "${corpus.name}".`)
    name = parsed.name
    if (corpus.documents.has(name)) throw failure('ALREADY_EXISTS', `Document "${name}" already exists.`, 'document.name')
  } else {
    do name = `${corpus.name}/documents/${derivedId(displayName, ctx.options.randomId)}`
    while (corpus.documents.has(name))
  }
  if (corpus.documents.size >= ctx.options.limits.documentsPerCorpus) {
    throw failure('RESOURCE_EXHAUSTED', `A corpus holds at most ${ctx.options.limits.documentsPerCorpus} documents; "${corpus.name}" is full.`)
  }
  const state: DocumentState = { name, displayName, customMetadata, chunks: new Map(), ...ctx.stamp() }
  corpus.documentsFile.changed()
  corpus.documents.set(name, state)
  return documentJson(state)
}

export async function getDocument(ctx: RetrieverContext, request: unknown): Promise<DocumentJson> {
  const { name } = readMessage(GetDocumentRequest, request)
  return documentJson(ctx.document(name, 'name').document)
}

/**
 * Gives the index records of a document's searchable chunks their new metadata (it carries the
 * document's): the metadata alone, their vectors and graph links untouched (an upsert would re-link
 * every chunk in the graph: seconds per thousand chunks).
 */
function reindexChunks(corpus: CorpusState, document: DocumentState): void {
  for (const chunk of document.chunks.values()) {
    if (chunk.state === 'STATE_ACTIVE' && corpus.index.has(chunk.name)) corpus.index.replaceMetadata(chunk.name, chunkMetadata(document, chunk))
  }
}

export async function updateDocument(ctx: RetrieverContext, request: unknown): Promise<DocumentJson> {
  const { document = {}, updateMask } = readMessage(UpdateDocumentRequest, request)
  const { corpus, document: target } = ctx.document(document.name, 'document.name')
  const paths = checkUpdateMask(updateMask, ['displayName', 'customMetadata'], 'document')
  const displayName = paths.has('displayName') ? ctx.checkDisplayName(document.displayName, 'document.displayName') : target.displayName
  const customMetadata = paths.has('customMetadata')
    ? readCustomMetadata(document.customMetadata, 'document.customMetadata', ctx.options.limits.customMetadata)
    : target.customMetadata
  corpus.documentsFile.changed()
  target.displayName = displayName
  if (customMetadata !== target.customMetadata) {
    target.customMetadata = customMetadata
    reindexChunks(corpus, target)
  }
  target.updateMs = ctx.now()
  return documentJson(target)
}

export async function deleteDocument(ctx: RetrieverContext, request: unknown): Promise<EmptyJson> {
  const { name, force = false } = readMessage(DeleteDocumentRequest, request)
  const { corpus, document } = ctx.document(name, 'name')
  if (document.chunks.size > 0 && !force) {
    throw failure('FAILED_PRECONDITION', `Document "${document.name}" holds ${document.chunks.size} chunk(s); delete them first or pass force: true to delete them with it.`, 'force')
  }
  corpus.documentsFile.changed()
  corpus.index.removeMany([...document.chunks.keys()])
  corpus.chunkCount -= document.chunks.size
  corpus.documents.delete(document.name)
  return {}
}

export async function listDocuments(ctx: RetrieverContext, request: unknown): Promise<ListDocumentsResponseJson> {
  const req = readMessage(ListDocumentsRequest, request)
  const corpus = ctx.corpus(req.parent, 'parent')
  const page = pageOf([...corpus.documents.values()], (d) => d.seq, `listDocuments ${corpus.name}`, req, { defaultSize: 10, maxSize: 20 })
  return omitUnset({ documents: page.items.map(documentJson), nextPageToken: page.nextPageToken })
}
