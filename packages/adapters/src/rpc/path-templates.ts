/**
 * Google's resource-name helpers, generically: its generated clients carry, for every resource
 * pattern of the API, `xxxPath(...ids)` (render a name) and `matchYyyFromXxxName(name)` (read one
 * id back) — pure string functions over a path template. Here they are derived from the same
 * templates (copied from the pinned clients: @google-cloud/aiplatform 6.11, v1beta1, which holds
 * v1's too; @google-ai/generativelanguage 3.7, v1beta) and behave as google-gax's PathTemplate
 * does: an argument that is missing or has no character besides `/{}` throws a TypeError, and so
 * does a name of another shape.
 */

/** The variable names of a template, in order: `projects/{project}/x/{rag_corpus}` → ['project', 'rag_corpus']. */
type Vars<S extends string> = S extends `${string}{${infer V}}${infer Rest}` ? [V, ...Vars<Rest>] : []
type Camel<S extends string> = S extends `${infer H}_${infer T}` ? `${H}${Capitalize<Camel<T>>}` : S
type PathArgs<V extends readonly string[]> = { [I in keyof V]: string }
type MatchName<T> = { [K in keyof T & string]: `match${Capitalize<Camel<Vars<T[K] & string>[number]>>}From${Capitalize<K>}Name` }[keyof T & string]

/** `ragCorpusPath(project, location, ragCorpus)` and `matchRagCorpusFromRagCorpusName(name)` for every template. */
export type PathHelpers<T> = {
  readonly [K in keyof T & string as `${K}Path`]: (...ids: PathArgs<Vars<T[K] & string>>) => string
} & {
  readonly [P in MatchName<T>]: (name: string) => string
}

const camel = (s: string): string => s.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase())
const capital = (s: string): string => `${s.charAt(0).toUpperCase()}${s.slice(1)}`
const variable = (segment: string): string | undefined => (segment.startsWith('{') && segment.endsWith('}') ? segment.slice(1, -1) : undefined)

function render(key: string, segments: readonly string[], ids: readonly unknown[]): string {
  let i = 0
  return segments
    .map((segment) => {
      const v = variable(segment)
      if (v === undefined) return segment
      const id = ids[i++]
      if (id === undefined || id === null) throw new TypeError(`${key}Path: the ${camel(v)} argument is missing.`)
      const text = String(id)
      if (!/[^/{}]/.test(text)) throw new TypeError(`${key}Path: ${camel(v)} "${text}" is not a resource id.`)
      return text
    })
    .join('/')
}

function match(template: string, segments: readonly string[], name: unknown): Readonly<Record<string, string>> {
  if (typeof name !== 'string') throw new TypeError(`Expected a resource name of the form ${template}; received ${typeof name}.`)
  const parts = name.split('/')
  if (parts.length !== segments.length) throw new TypeError(`The name ${name} does not match the template ${template}: ${parts.length} segments instead of ${segments.length}.`)
  const ids: Record<string, string> = {}
  segments.forEach((segment, i) => {
    const part = parts[i] as string
    const v = variable(segment)
    if (v !== undefined) ids[v] = part
    else if (part !== segment) throw new TypeError(`The name ${name} does not match the template ${template}: "${part}" where "${segment}" belongs.`)
  })
  return ids
}

/** The path helpers of a set of templates (name → pattern), as Google's client of that API has them. */
export function pathHelpers<const T extends Readonly<Record<string, string>>>(templates: T): PathHelpers<T> {
  const out: Record<string, unknown> = {}
  for (const [key, template] of Object.entries(templates)) {
    const segments = template.split('/')
    out[`${key}Path`] = (...ids: unknown[]) => render(key, segments, ids)
    for (const v of segments.map(variable)) {
      if (v !== undefined) out[`match${capital(camel(v))}From${capital(key)}Name`] = (name: string) => match(template, segments, name)[v]
    }
  }
  return out as PathHelpers<T>
}

/** Every resource pattern the aiplatform Vertex RAG and Memory Bank clients know (v1beta1's, a superset of v1's). */
export const AIPLATFORM_PATH_TEMPLATES = {
  annotation: 'projects/{project}/locations/{location}/datasets/{dataset}/dataItems/{data_item}/annotations/{annotation}',
  annotationSpec: 'projects/{project}/locations/{location}/datasets/{dataset}/annotationSpecs/{annotation_spec}',
  artifact: 'projects/{project}/locations/{location}/metadataStores/{metadata_store}/artifacts/{artifact}',
  batchPredictionJob: 'projects/{project}/locations/{location}/batchPredictionJobs/{batch_prediction_job}',
  cachedContent: 'projects/{project}/locations/{location}/cachedContents/{cached_content}',
  context: 'projects/{project}/locations/{location}/metadataStores/{metadata_store}/contexts/{context}',
  customJob: 'projects/{project}/locations/{location}/customJobs/{custom_job}',
  dataItem: 'projects/{project}/locations/{location}/datasets/{dataset}/dataItems/{data_item}',
  dataLabelingJob: 'projects/{project}/locations/{location}/dataLabelingJobs/{data_labeling_job}',
  dataset: 'projects/{project}/locations/{location}/datasets/{dataset}',
  datasetVersion: 'projects/{project}/locations/{location}/datasets/{dataset}/datasetVersions/{dataset_version}',
  deploymentResourcePool: 'projects/{project}/locations/{location}/deploymentResourcePools/{deployment_resource_pool}',
  entityType: 'projects/{project}/locations/{location}/featurestores/{featurestore}/entityTypes/{entity_type}',
  exampleStore: 'projects/{project}/locations/{location}/exampleStores/{example_store}',
  execution: 'projects/{project}/locations/{location}/metadataStores/{metadata_store}/executions/{execution}',
  extension: 'projects/{project}/locations/{location}/extensions/{extension}',
  featureGroup: 'projects/{project}/locations/{location}/featureGroups/{feature_group}',
  featureMonitor: 'projects/{project}/locations/{location}/featureGroups/{feature_group}/featureMonitors/{feature_monitor}',
  featureMonitorJob: 'projects/{project}/locations/{location}/featureGroups/{feature_group}/featureMonitors/{feature_monitor}/featureMonitorJobs/{feature_monitor_job}',
  featureOnlineStore: 'projects/{project}/locations/{location}/featureOnlineStores/{feature_online_store}',
  featureView: 'projects/{project}/locations/{location}/featureOnlineStores/{feature_online_store}/featureViews/{feature_view}',
  featureViewSync: 'projects/{project}/locations/{location}/featureOnlineStores/{feature_online_store}/featureViews/{feature_view}/featureViewSyncs/feature_view_sync',
  featurestore: 'projects/{project}/locations/{location}/featurestores/{featurestore}',
  hyperparameterTuningJob: 'projects/{project}/locations/{location}/hyperparameterTuningJobs/{hyperparameter_tuning_job}',
  index: 'projects/{project}/locations/{location}/indexes/{index}',
  indexEndpoint: 'projects/{project}/locations/{location}/indexEndpoints/{index_endpoint}',
  location: 'projects/{project}/locations/{location}',
  memory: 'projects/{project}/locations/{location}/reasoningEngines/{reasoning_engine}/memories/{memory}',
  metadataSchema: 'projects/{project}/locations/{location}/metadataStores/{metadata_store}/metadataSchemas/{metadata_schema}',
  metadataStore: 'projects/{project}/locations/{location}/metadataStores/{metadata_store}',
  model: 'projects/{project}/locations/{location}/models/{model}',
  modelDeploymentMonitoringJob: 'projects/{project}/locations/{location}/modelDeploymentMonitoringJobs/{model_deployment_monitoring_job}',
  modelEvaluation: 'projects/{project}/locations/{location}/models/{model}/evaluations/{evaluation}',
  modelEvaluationSlice: 'projects/{project}/locations/{location}/models/{model}/evaluations/{evaluation}/slices/{slice}',
  modelMonitor: 'projects/{project}/locations/{location}/modelMonitors/{model_monitor}',
  modelMonitoringJob: 'projects/{project}/locations/{location}/modelMonitors/{model_monitor}/modelMonitoringJobs/{model_monitoring_job}',
  nasJob: 'projects/{project}/locations/{location}/nasJobs/{nas_job}',
  nasTrialDetail: 'projects/{project}/locations/{location}/nasJobs/{nas_job}/nasTrialDetails/{nas_trial_detail}',
  notebookExecutionJob: 'projects/{project}/locations/{location}/notebookExecutionJobs/{notebook_execution_job}',
  notebookRuntime: 'projects/{project}/locations/{location}/notebookRuntimes/{notebook_runtime}',
  notebookRuntimeTemplate: 'projects/{project}/locations/{location}/notebookRuntimeTemplates/{notebook_runtime_template}',
  onlineEvaluator: 'projects/{project}/locations/{location}/onlineEvaluators/{online_evaluator}',
  persistentResource: 'projects/{project}/locations/{location}/persistentResources/{persistent_resource}',
  pipelineJob: 'projects/{project}/locations/{location}/pipelineJobs/{pipeline_job}',
  projectLocationEndpoint: 'projects/{project}/locations/{location}/endpoints/{endpoint}',
  projectLocationFeatureGroupFeatures: 'projects/{project}/locations/{location}/featureGroups/{feature_group}/features/{feature}',
  projectLocationFeaturestoreEntityTypeFeatures: 'projects/{project}/locations/{location}/featurestores/{featurestore}/entityTypes/{entity_type}/features/{feature}',
  projectLocationPublisherModel: 'projects/{project}/locations/{location}/publishers/{publisher}/models/{model}',
  publisherModel: 'publishers/{publisher}/models/{model}',
  ragCorpus: 'projects/{project}/locations/{location}/ragCorpora/{rag_corpus}',
  ragDataSchema: 'projects/{project}/locations/{location}/ragCorpora/{rag_corpus}/ragDataSchemas/{rag_data_schema}',
  ragEngineConfig: 'projects/{project}/locations/{location}/ragEngineConfig',
  ragFile: 'projects/{project}/locations/{location}/ragCorpora/{rag_corpus}/ragFiles/{rag_file}',
  ragMetadata: 'projects/{project}/locations/{location}/ragCorpora/{rag_corpus}/ragFiles/{rag_file}/ragMetadata/{rag_metadata}',
  reasoningEngine: 'projects/{project}/locations/{location}/reasoningEngines/{reasoning_engine}',
  reasoningEngineRuntimeRevision: 'projects/{project}/locations/{location}/reasoningEngines/{reasoning_engine}/runtimeRevisions/{runtime_revision}',
  savedQuery: 'projects/{project}/locations/{location}/datasets/{dataset}/savedQueries/{saved_query}',
  schedule: 'projects/{project}/locations/{location}/schedules/{schedule}',
  session: 'projects/{project}/locations/{location}/reasoningEngines/{reasoning_engine}/sessions/{session}',
  sessionEvent: 'projects/{project}/locations/{location}/reasoningEngines/{reasoning_engine}/sessions/{session}/events/{event}',
  specialistPool: 'projects/{project}/locations/{location}/specialistPools/{specialist_pool}',
  study: 'projects/{project}/locations/{location}/studies/{study}',
  tensorboard: 'projects/{project}/locations/{location}/tensorboards/{tensorboard}',
  tensorboardExperiment: 'projects/{project}/locations/{location}/tensorboards/{tensorboard}/experiments/{experiment}',
  tensorboardRun: 'projects/{project}/locations/{location}/tensorboards/{tensorboard}/experiments/{experiment}/runs/{run}',
  tensorboardTimeSeries: 'projects/{project}/locations/{location}/tensorboards/{tensorboard}/experiments/{experiment}/runs/{run}/timeSeries/{time_series}',
  trainingPipeline: 'projects/{project}/locations/{location}/trainingPipelines/{training_pipeline}',
  trial: 'projects/{project}/locations/{location}/studies/{study}/trials/{trial}',
  tuningJob: 'projects/{project}/locations/{location}/tuningJobs/{tuning_job}',
} as const

/**
 * The aiplatform clients' path helpers, made once when the package is imported: the five
 * in-process client classes share them on their prototypes (each function depends on its template
 * alone), rather than each making hundreds of the same closures.
 */
export const AIPLATFORM_PATH_HELPERS = pathHelpers(AIPLATFORM_PATH_TEMPLATES)

/** Every resource pattern of generativelanguage v1beta's RetrieverServiceClient. */
export const GENERATIVE_LANGUAGE_PATH_TEMPLATES = {
  cachedContent: 'cachedContents/{id}',
  chunk: 'corpora/{corpus}/documents/{document}/chunks/{chunk}',
  corpus: 'corpora/{corpus}',
  corpusPermissions: 'corpora/{corpus}/permissions/{permission}',
  document: 'corpora/{corpus}/documents/{document}',
  file: 'files/{file}',
  model: 'models/{model}',
  tunedModel: 'tunedModels/{tuned_model}',
  tunedModelPermissions: 'tunedModels/{tuned_model}/permissions/{permission}',
} as const
