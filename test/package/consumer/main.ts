// Prints a scenario's results as JSON: `node main.js full`, `node main.js exact`,
// `node main.js graph-save <dir>` (builds and saves the graph index) or `node main.js graph <dir>`.
import { graphAnswers, saveGraph } from './graph.js'
import { exactScenario, fullScenario } from './scenario.js'

const [mode, dir = ''] = process.argv.slice(2)
if (mode === 'graph-save') saveGraph(dir)
else if (mode === 'graph') console.log(JSON.stringify(graphAnswers(dir)))
else console.log(JSON.stringify(mode === 'exact' ? await exactScenario() : await fullScenario()))
