import { UNARY, method, pagedShape } from '../rpc/methods.js'
import { batchCreateChunks, batchDeleteChunks, batchUpdateChunks, createChunk, deleteChunk, getChunk, listChunks, updateChunk } from './chunks.js'
import { createCorpus, deleteCorpus, getCorpus, listCorpora, updateCorpus } from './corpora.js'
import { createDocument, deleteDocument, getDocument, listDocuments, updateDocument } from './documents.js'
import { queryCorpus, queryDocument } from './query.js'

/** google.ai.generativelanguage.v1beta.RetrieverService, every method once (bindings as in its protos). */
export const RETRIEVER_SERVICE = 'google.ai.generativelanguage.v1beta.RetrieverService'

const C = 'corpora/*'
const D = 'corpora/*/documents/*'
const K = `${D}/chunks/*`
const read = false
const write = true

export const RETRIEVER_TABLE = {
  createCorpus: method({ rpc: 'CreateCorpus', run: createCorpus, write, shape: UNARY, http: [{ verb: 'POST', path: 'corpora', body: 'corpus' }] }),
  getCorpus: method({ rpc: 'GetCorpus', run: getCorpus, write: read, shape: UNARY, http: [{ verb: 'GET', path: `{name=${C}}` }] }),
  updateCorpus: method({ rpc: 'UpdateCorpus', run: updateCorpus, write, shape: UNARY, http: [{ verb: 'PATCH', path: `{corpus.name=${C}}`, body: 'corpus' }] }),
  deleteCorpus: method({ rpc: 'DeleteCorpus', run: deleteCorpus, write, shape: UNARY, http: [{ verb: 'DELETE', path: `{name=${C}}` }] }),
  listCorpora: method({ rpc: 'ListCorpora', run: listCorpora, write: read, shape: pagedShape('corpora'), http: [{ verb: 'GET', path: 'corpora' }] }),
  queryCorpus: method({ rpc: 'QueryCorpus', run: queryCorpus, write: read, shape: UNARY, http: [{ verb: 'POST', path: `{name=${C}}:query`, body: '*' }] }),
  createDocument: method({ rpc: 'CreateDocument', run: createDocument, write, shape: UNARY, http: [{ verb: 'POST', path: `{parent=${C}}/documents`, body: 'document' }] }),
  getDocument: method({ rpc: 'GetDocument', run: getDocument, write: read, shape: UNARY, http: [{ verb: 'GET', path: `{name=${D}}` }] }),
  updateDocument: method({ rpc: 'UpdateDocument', run: updateDocument, write, shape: UNARY, http: [{ verb: 'PATCH', path: `{document.name=${D}}`, body: 'document' }] }),
  deleteDocument: method({ rpc: 'DeleteDocument', run: deleteDocument, write, shape: UNARY, http: [{ verb: 'DELETE', path: `{name=${D}}` }] }),
  listDocuments: method({ rpc: 'ListDocuments', run: listDocuments, write: read, shape: pagedShape('documents'), http: [{ verb: 'GET', path: `{parent=${C}}/documents` }] }),
  queryDocument: method({ rpc: 'QueryDocument', run: queryDocument, write: read, shape: UNARY, http: [{ verb: 'POST', path: `{name=${D}}:query`, body: '*' }] }),
  createChunk: method({ rpc: 'CreateChunk', run: createChunk, write, shape: UNARY, http: [{ verb: 'POST', path: `{parent=${D}}/chunks`, body: 'chunk' }] }),
  batchCreateChunks: method({ rpc: 'BatchCreateChunks', run: batchCreateChunks, write, shape: UNARY, http: [{ verb: 'POST', path: `{parent=${D}}/chunks:batchCreate`, body: '*' }] }),
  getChunk: method({ rpc: 'GetChunk', run: getChunk, write: read, shape: UNARY, http: [{ verb: 'GET', path: `{name=${K}}` }] }),
  updateChunk: method({ rpc: 'UpdateChunk', run: updateChunk, write, shape: UNARY, http: [{ verb: 'PATCH', path: `{chunk.name=${K}}`, body: 'chunk' }] }),
  batchUpdateChunks: method({ rpc: 'BatchUpdateChunks', run: batchUpdateChunks, write, shape: UNARY, http: [{ verb: 'POST', path: `{parent=${D}}/chunks:batchUpdate`, body: '*' }] }),
  deleteChunk: method({ rpc: 'DeleteChunk', run: deleteChunk, write, shape: UNARY, http: [{ verb: 'DELETE', path: `{name=${K}}` }] }),
  batchDeleteChunks: method({ rpc: 'BatchDeleteChunks', run: batchDeleteChunks, write, shape: UNARY, http: [{ verb: 'POST', path: `{parent=${D}}/chunks:batchDelete`, body: '*' }] }),
  listChunks: method({ rpc: 'ListChunks', run: listChunks, write: read, shape: pagedShape('chunks'), http: [{ verb: 'GET', path: `{parent=${D}}/chunks` }] }),
} as const
