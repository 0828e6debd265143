// @google/genai in Vertex mode, pointed at Quarry by `httpOptions.baseUrl` alone, in a plain Node
// process (as the ADK scripts: no vitest export conditions). Usage:
// node genai-generate.mjs BASE_URL '{"model", "contents", "config"}' with GOOGLE_APPLICATION_CREDENTIALS
// and GOOGLE_CLOUD_PROJECT set; prints the response's candidates and modelVersion as JSON.
import { GoogleGenAI } from '@google/genai'

const [baseUrl, spec] = process.argv.slice(2)
const { model, contents, config } = JSON.parse(spec)
const ai = new GoogleGenAI({ vertexai: true, project: process.env.GOOGLE_CLOUD_PROJECT, location: 'us-central1', httpOptions: { baseUrl } })
const response = await ai.models.generateContent({ model, contents, config })
process.stdout.write(JSON.stringify({ text: response.text, candidates: response.candidates, modelVersion: response.modelVersion, usageMetadata: response.usageMetadata }))
