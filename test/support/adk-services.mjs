// ADK's Vertex services for the child-process scripts beside this file: @google-cloud/vertexai's
// `Client` pointed at the server with `apiEndpoint`, and ADK's session and memory services of one
// reasoning engine over it (project from GOOGLE_CLOUD_PROJECT, credentials from
// GOOGLE_APPLICATION_CREDENTIALS).
import { Client } from '@google-cloud/vertexai'
import { LogLevel, VertexAiMemoryBankService, VertexAiSessionService, setLogLevel } from '@google/adk'

export function adkServices(apiEndpoint, engine) {
  setLogLevel(LogLevel.WARN)
  const project = process.env.GOOGLE_CLOUD_PROJECT
  const client = new Client({ project, location: 'us-central1', apiEndpoint })
  const sessions = new VertexAiSessionService({ projectId: project, location: 'us-central1', agentEngineId: engine, sessions: client.agentEnginesInternal.sessions })
  const memory = new VertexAiMemoryBankService({ projectId: project, location: 'us-central1', agentEngineId: engine, client })
  return { project, client, sessions, memory }
}
