// ADK's LlmAgent with a VertexRagRetrievalTool, its Gemini calls sent to Quarry, in a plain Node
// process (why: adk-memory-bank.mjs). ADK's Gemini picks Vertex from GOOGLE_GENAI_USE_VERTEXAI,
// GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION, and @google/genai its host from
// GOOGLE_VERTEX_BASE_URL (with GOOGLE_APPLICATION_CREDENTIALS for the token). Usage:
// node adk-rag-agent.mjs '{"corpus", "topK", "question", "shelfTool"?, "sse"?}' (shelfTool: the agent also has a
// function tool `shelf` answering { shelf: 'B3' }; sse: ADK's streaming mode, streamGenerateContent); prints each event's author, text, function calls and grounding
// metadata as JSON on the last line.
import { FunctionTool, InMemoryRunner, LlmAgent, LogLevel, StreamingMode, VertexRagRetrievalTool, setLogLevel } from '@google/adk'

const { corpus, topK, question, shelfTool, sse } = JSON.parse(process.argv[2])
setLogLevel(LogLevel.WARN)
const agent = new LlmAgent({
  name: 'librarian',
  model: 'gemini-2.5-flash',
  instruction: 'Answer from the library.',
  tools: [
    new VertexRagRetrievalTool({ ragResources: [{ ragCorpus: corpus }], similarityTopK: topK }),
    ...(shelfTool ? [new FunctionTool({ name: 'shelf', description: 'Where a book is shelved.', parameters: { type: 'OBJECT', properties: { title: { type: 'STRING' } } }, execute: () => ({ shelf: 'B3' }) })] : []),
  ],
})
const runner = new InMemoryRunner({ agent, appName: 'library' })
const events = []
for await (const event of runner.runEphemeral({ userId: 'ana', newMessage: { role: 'user', parts: [{ text: question }] }, ...(sse ? { runConfig: { streamingMode: StreamingMode.SSE } } : {}) })) {
  events.push({ author: event.author, partial: event.partial, text: event.content?.parts?.map((p) => p.text ?? '').join(''), functionCalls: event.content?.parts?.filter((p) => p.functionCall).map((p) => p.functionCall.name), groundingMetadata: event.groundingMetadata })
}
// ADK logs its warnings to stdout: the answer is the last line.
process.stdout.write(`\n${JSON.stringify(events)}\n`)
