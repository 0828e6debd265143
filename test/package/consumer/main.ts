// Prints a scenario's results as JSON: `node main.js full` or `node main.js exact`.
import { exactScenario, fullScenario } from './scenario.js'

const result = process.argv[2] === 'exact' ? await exactScenario() : await fullScenario()
console.log(JSON.stringify(result))
