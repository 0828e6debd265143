// @google/genai in Vertex mode, pointed at Quarry by `httpOptions.baseUrl` alone, in a plain Node
// process (as the ADK scripts: no vitest export conditions). Usage:
// node genai-generate.mjs BASE_URL '{"model", "contents", "config", "stream"?}' with GOOGLE_APPLICATION_CREDENTIALS
// and GOOGLE_CLOUD_PROJECT set; prints the response's candidates and modelVersion as JSON.
import { GoogleGenAI } from '@google/genai'

const [baseUrl, spec] = process.argv.slice(2)
const { model, contents, config, stream } = JSON.parse(spec)
const ai = new GoogleGenAI({ vertexai: true, project: process.env.GOOGLE_CLOUD_PROJECT, location: 'us-central1', httpOptions: { baseUrl } })
// stream: generateContentStream (streamGenerateContent?alt=sse); its one chunk is the answer.
const chunks = []
if (stream) for await (const chunk of await ai.models.generateContentStream({ model, contents, config })) chunks.push(chunk)
const response = stream ? chunks[0] : await ai.models.generateContent({ model, contents, config })
process.stdout.write(JSON.stringify({ chunks: chunks.length, text: response.text, candidates: response.candidates, modelVersion: response.modelVersion, usageMetadata: response.usageMetadata }))
